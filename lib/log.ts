// Structured JSON logging with secret redaction: any attribute whose name looks like a credential
// is replaced before the line is written, so credentials cannot reach CloudWatch or a terminal
// even when a whole request or record is logged by mistake.

const SECRET_KEY = /pass(word)?|secret|token|credential|accessinfo|authorization|authentication|api[-_]?key|private[-_]?key|ssl_ca_cert|client_?secret/i;

export function redact(value: unknown, depth = 0): unknown {
  if (depth > 12) return '[depth]';
  if (Array.isArray(value)) return value.map((item) => redact(item, depth + 1));
  if (value && typeof value === 'object') {
    if (value instanceof Error) return { name: value.name, message: value.message, stack: value.stack };
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, SECRET_KEY.test(key) ? '[redacted]' : redact(item, depth + 1)]));
  }
  return value;
}

type Level = 'debug' | 'info' | 'warn' | 'error';
const ORDER: Record<Level, number> = { debug: 10, info: 20, warn: 30, error: 40 };

function write(level: Level, message: string, fields?: Record<string, unknown>): void {
  const threshold = (process.env.LOG_LEVEL?.toLowerCase() as Level | undefined) ?? 'info';
  if (ORDER[level] < (ORDER[threshold] ?? ORDER.info)) return;
  const line = JSON.stringify({ level, time: new Date().toISOString(), message, ...(redact(fields ?? {}) as Record<string, unknown>) });
  (level === 'error' || level === 'warn' ? process.stderr : process.stdout).write(`${line}\n`);
}

export const log = {
  debug: (message: string, fields?: Record<string, unknown>) => write('debug', message, fields),
  info: (message: string, fields?: Record<string, unknown>) => write('info', message, fields),
  warn: (message: string, fields?: Record<string, unknown>) => write('warn', message, fields),
  error: (message: string, fields?: Record<string, unknown>) => write('error', message, fields),
};
