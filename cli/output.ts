// How read commands print what the API answered: `table` for people (chosen columns for lists,
// field/value rows for one resource), `json` exactly as the API represented it (for scripts), and
// `yaml` the same data as YAML.
import Table from 'cli-table3';
import { stringify } from 'yaml';
import { CliError } from './client.ts';

export const FORMATS = ['table', 'json', 'yaml'] as const;
export type Format = (typeof FORMATS)[number];

export interface Column<T> {
  header: string;
  value: (item: T) => unknown;
}

export function parseFormat(value: string | undefined): Format {
  const format = value ?? 'table';
  if (!(FORMATS as readonly string[]).includes(format)) throw new CliError(`Unknown output format "${format}"; use one of ${FORMATS.join(', ')}`);
  return format as Format;
}

/** One cell: scalars as they are, lists of scalars comma-separated, anything else as YAML. */
export function cell(value: unknown): string {
  if (value === undefined || value === null) return '';
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return String(value);
  if (Array.isArray(value) && value.every((entry) => entry === null || typeof entry !== 'object')) return value.map(cell).join(', ');
  return stringify(value).trimEnd();
}

/** A table without colours or padding lines, so that it reads the same in a terminal, a pipe and a log. */
function plainTable(head: string[]): Table.Table {
  return new Table({ head, style: { head: [], border: [], compact: true } });
}

/** `json` and `yaml` print the data as given, whatever the view would show. */
function machine(data: unknown, format: Format): string | undefined {
  if (format === 'json') return `${JSON.stringify(data, null, 2)}\n`;
  if (format === 'yaml') return stringify(data);
  return undefined;
}

export function renderList<T>(items: readonly T[], columns: readonly Column<T>[], format: Format): string {
  const printed = machine(items, format);
  if (printed !== undefined) return printed;
  const table = plainTable(columns.map((column) => column.header));
  for (const item of items) table.push(columns.map((column) => cell(column.value(item))));
  return `${table.toString()}\n`;
}

/** One resource: in a table every top-level attribute but `_links`, in the API's order. */
export function renderItem(item: unknown, format: Format): string {
  const printed = machine(item, format);
  if (printed !== undefined) return printed;
  if (typeof item !== 'object' || item === null) return `${cell(item)}\n`;
  const table = plainTable(['Field', 'Value']);
  for (const [name, value] of Object.entries(item)) {
    if (name === '_links') continue;
    table.push([name, cell(value)]);
  }
  return `${table.toString()}\n`;
}

/** Elapsed time as the progress lines show it: 0.4s, 12.0s, 3m05s. */
export function elapsed(ms: number): string {
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)}s`;
  const seconds = Math.floor(ms / 1000);
  return `${Math.floor(seconds / 60)}m${String(seconds % 60).padStart(2, '0')}s`;
}
