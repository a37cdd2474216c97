// What commands read besides their arguments: request parts given as a file (JSON or YAML) or as
// inline JSON, and a secret typed at the terminal without echo or piped on stdin.
import { existsSync, readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { CliError } from './client.ts';

/** A JSON or YAML document from a file, or `value` itself parsed as JSON when it is no file. */
export function readDocument(value: string, what: string): unknown {
  const trimmed = value.trim();
  if (!existsSync(value) && /^[[{]/.test(trimmed)) {
    try {
      return JSON.parse(trimmed);
    } catch (error) {
      throw new CliError(`${what}: not valid JSON (${(error as Error).message})`);
    }
  }
  let text: string;
  try {
    text = readFileSync(value, 'utf8');
  } catch {
    throw new CliError(`${what}: no file ${value} (give a JSON or YAML file, or inline JSON)`);
  }
  try {
    // YAML is a superset of JSON: one parser reads both.
    return parse(text);
  } catch (error) {
    throw new CliError(`${what}: ${value} is neither JSON nor YAML (${(error as Error).message})`);
  }
}

/** A document that must be an object (a request body, additionalParams). */
export function readObject(value: string, what: string): Record<string, unknown> {
  const document = readDocument(value, what);
  if (typeof document !== 'object' || document === null || Array.isArray(document)) throw new CliError(`${what}: ${value} must hold an object`);
  return document as Record<string, unknown>;
}

/** A list (extVirtualLinks); a single object is taken as a list of one. */
export function readList(value: string, what: string): unknown[] {
  const document = readDocument(value, what);
  if (Array.isArray(document)) return document;
  if (typeof document === 'object' && document !== null) {
    // A file holding a whole request part ({"extVirtualLinks": [...]}) is accepted too.
    const inner = (document as Record<string, unknown>).extVirtualLinks;
    return Array.isArray(inner) ? inner : [document];
  }
  throw new CliError(`${what}: ${value} must hold a list or an object`);
}

/** All of stdin, trimmed of its final newline (`--client-secret-stdin`). */
export async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks)
    .toString('utf8')
    .replace(/\r?\n$/, '');
}

/** Asks for a secret on the terminal without echoing it. */
export async function promptSecret(prompt: string): Promise<string> {
  const input = process.stdin;
  if (!input.isTTY) throw new CliError('No terminal to ask for the secret on; pipe it with --client-secret-stdin');
  process.stderr.write(prompt);
  input.setRawMode(true);
  input.resume();
  input.setEncoding('utf8');
  try {
    return await new Promise<string>((resolveSecret, reject) => {
      let secret = '';
      const onData = (data: string) => {
        for (const char of data) {
          if (char === '\r' || char === '\n' || char === '\u0004') {
            input.off('data', onData);
            resolveSecret(secret);
            return;
          }
          if (char === '\u0003') {
            input.off('data', onData);
            reject(new CliError('Cancelled', 130));
            return;
          }
          if (char === '\u007f' || char === '\b') secret = secret.slice(0, -1);
          else secret += char;
        }
      };
      input.on('data', onData);
    });
  } finally {
    input.setRawMode(false);
    input.pause();
    process.stderr.write('\n');
  }
}
