// Structured JSON logging with secret redaction: any attribute whose name looks like a credential
// is masked and URL userinfo removed before the line is written (lib/redact.ts), so credentials
// cannot reach CloudWatch or a terminal even when a whole request or record is logged by mistake.
import { redactSecrets, withoutUserinfo } from './redact.ts';

type Level = 'debug' | 'info' | 'warn' | 'error';
const ORDER: Record<Level, number> = { debug: 10, info: 20, warn: 30, error: 40 };

function write(level: Level, message: string, fields?: Record<string, unknown>): void {
  const threshold = (process.env.LOG_LEVEL?.toLowerCase() as Level | undefined) ?? 'info';
  if (ORDER[level] < (ORDER[threshold] ?? ORDER.info)) return;
  const line = JSON.stringify({
    level,
    time: new Date().toISOString(),
    message: withoutUserinfo(message),
    ...redactSecrets(fields ?? {}, { marker: '[redacted]' }),
  });
  (level === 'error' || level === 'warn' ? process.stderr : process.stdout).write(`${line}\n`);
}

export const log = {
  debug: (message: string, fields?: Record<string, unknown>) => write('debug', message, fields),
  info: (message: string, fields?: Record<string, unknown>) => write('info', message, fields),
  warn: (message: string, fields?: Record<string, unknown>) => write('warn', message, fields),
  error: (message: string, fields?: Record<string, unknown>) => write('error', message, fields),
};
