// Safe YAML for untrusted input (VNFD files, HOT templates, Kubernetes manifests): plain YAML 1.2
// data only, with size, nesting and alias bounds checked before anything recursive runs.
import { CST, Composer, Lexer, LineCounter, Parser, isMap, isScalar, isSeq, type Node as YamlNode } from 'yaml';

/** Bounds on untrusted YAML: real VNFDs are a few files of tens of kilobytes, a few levels deep. */
export const VNFD_LIMITS = {
  maxFileBytes: 5 * 1024 * 1024,
  maxTotalBytes: 20 * 1024 * 1024,
  maxFiles: 200,
  maxDepth: 64,
  maxAliases: 100,
  /** Columns of block indentation; bounds block nesting before the (recursive) composer sees it. */
  maxIndent: 1024,
} as const;

/** YAML refused, and where (a path, with its line where known); callers say it in their own terms. */
export class UnsafeYamlError extends Error {
  constructor(
    detail: string,
    readonly where?: string,
    options?: { cause?: unknown },
  ) {
    super(detail, options);
    this.name = 'UnsafeYamlError';
  }
}

/** Text that is not (strict YAML 1.2) YAML, as opposed to YAML refused for its size or shape. */
export class InvalidYamlError extends UnsafeYamlError {}

const CORE_TAGS = new Set(['str', 'int', 'float', 'bool', 'null', 'map', 'seq'].map((name) => `tag:yaml.org,2002:${name}`));
/** Lexer control characters that stand for no source text. */
const LEXER_MARKERS = new Set(['\x02', '\x18', '\x1f']);

/**
 * Parses one YAML file into plain data, refusing what a VNFD never needs and an attacker would use:
 * huge files, deep nesting, alias expansion, duplicate keys, and explicit or custom tags.
 */
export function parseSafeYaml(text: string, where: string): unknown {
  const bytes = Buffer.byteLength(text, 'utf8');
  if (bytes > VNFD_LIMITS.maxFileBytes) {
    throw new UnsafeYamlError(`is ${bytes} bytes; a VNFD file may have at most ${VNFD_LIMITS.maxFileBytes} bytes`, where);
  }
  const lines = new LineCounter();
  lines.addNewLine(0);
  const at = (offset: number | undefined): string => (offset === undefined ? where : `${where}:${lines.linePos(offset).line}`);

  // One lexer pass, fed to the parser as it goes, bounds nesting and aliases before anything recursive
  // (the composer, toJS) runs: `[[[[...` or `- - - ...` would otherwise cost seconds to reject.
  const parser = new Parser(lines.addNewLine);
  const tokens: CST.Token[] = [];
  let offset = 0;
  let flowDepth = 0;
  let aliases = 0;
  let column = 0;
  let lineStart = true;
  let scalarBody = false;
  for (const lexeme of new Lexer().lex(text)) {
    if (LEXER_MARKERS.has(lexeme)) {
      if (lexeme === '\x1f') scalarBody = true;
    } else if (scalarBody) {
      scalarBody = false;
      offset += lexeme.length;
      lineStart = lexeme.endsWith('\n');
      column = 0;
    } else {
      const start = offset;
      offset += lexeme.length;
      switch (CST.tokenType(lexeme)) {
        case 'newline':
          lineStart = true;
          column = 0;
          break;
        case 'space':
        case 'seq-item-ind':
        case 'explicit-key-ind':
        case 'map-value-ind':
          if (lineStart) column += lexeme.length;
          if (column > VNFD_LIMITS.maxIndent) throw new UnsafeYamlError(`is indented more than ${VNFD_LIMITS.maxIndent} columns deep`, at(start));
          break;
        case 'flow-map-start':
        case 'flow-seq-start':
          lineStart = false;
          if (++flowDepth > VNFD_LIMITS.maxDepth) throw new UnsafeYamlError(`nests YAML collections more than ${VNFD_LIMITS.maxDepth} levels deep`, at(start));
          break;
        case 'flow-map-end':
        case 'flow-seq-end':
          lineStart = false;
          flowDepth = Math.max(0, flowDepth - 1);
          break;
        case 'alias':
          lineStart = false;
          if (++aliases > VNFD_LIMITS.maxAliases) throw new UnsafeYamlError(`uses more than ${VNFD_LIMITS.maxAliases} YAML aliases`, at(start));
          break;
        default:
          lineStart = false;
      }
    }
    for (const token of parser.next(lexeme)) tokens.push(token);
  }
  for (const token of parser.end()) tokens.push(token);

  // Duplicate keys are checked below with a Set: the library's own check is quadratic in map size.
  const documents = [...new Composer({ uniqueKeys: false }).compose(tokens, true, text.length)];
  if (documents.length !== 1) throw new UnsafeYamlError(`holds ${documents.length} YAML documents; a VNFD file holds one`, where);
  const document = documents[0] as (typeof documents)[number];
  const error = document.errors[0];
  if (error) throw new InvalidYamlError(`is not valid YAML: ${error.message.split('\n')[0]}`, at(error.pos[0]));

  const stack: Array<{ node: YamlNode | null | undefined; depth: number }> = [{ node: document.contents, depth: 1 }];
  while (stack.length) {
    const { node, depth } = stack.pop() as (typeof stack)[number];
    if (!node) continue;
    if (node.tag !== undefined && !CORE_TAGS.has(node.tag)) {
      throw new UnsafeYamlError(`uses the YAML tag ${node.tag}; a VNFD is plain YAML without tags`, at(node.range?.[0]));
    }
    if (isMap(node)) {
      if (depth > VNFD_LIMITS.maxDepth) throw new UnsafeYamlError(`nests YAML collections more than ${VNFD_LIMITS.maxDepth} levels deep`, at(node.range?.[0]));
      const keys = new Set<string>();
      for (const pair of node.items) {
        const key = pair.key as YamlNode | null;
        if (!isScalar(key)) throw new UnsafeYamlError('has a mapping key that is not a plain scalar', at(key?.range?.[0] ?? node.range?.[0]));
        const name = String(key.value);
        if (keys.has(name)) throw new UnsafeYamlError(`has the key "${name}" twice in one mapping`, at(key.range?.[0]));
        keys.add(name);
        stack.push({ node: key, depth: depth + 1 }, { node: pair.value as YamlNode | null, depth: depth + 1 });
      }
    } else if (isSeq(node)) {
      if (depth > VNFD_LIMITS.maxDepth) throw new UnsafeYamlError(`nests YAML collections more than ${VNFD_LIMITS.maxDepth} levels deep`, at(node.range?.[0]));
      for (const item of node.items) stack.push({ node: item as YamlNode | null, depth: depth + 1 });
    }
  }
  // Warnings come last so that an unresolved custom tag is reported as a tag above.
  const warning = document.warnings[0];
  if (warning) throw new InvalidYamlError(`is not valid YAML: ${warning.message.split('\n')[0]}`, at(warning.pos[0]));

  let value: unknown;
  try {
    value = document.toJS({ maxAliasCount: VNFD_LIMITS.maxAliases });
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    if (/alias count/i.test(message)) throw new UnsafeYamlError('expands YAML aliases beyond the limit (an alias bomb?)', where, { cause: error });
    throw new InvalidYamlError(`is not valid YAML: ${message}`, where, { cause: error });
  }
  // Aliases can still deepen the data, or make it circular (`a: &a [*a]`); shared objects are measured once.
  const heights = new Map<object, number>();
  const height = (item: unknown): number => {
    if (typeof item !== 'object' || item === null) return 0;
    const known = heights.get(item);
    if (known !== undefined) return known;
    heights.set(item, Infinity); // on the current path: reaching it again means a cycle
    let below = 0;
    for (const child of Array.isArray(item) ? item : Object.values(item)) {
      below = Math.max(below, height(child));
      if (below >= VNFD_LIMITS.maxDepth) break;
    }
    heights.set(item, below + 1);
    return below + 1;
  };
  if (height(value) > VNFD_LIMITS.maxDepth)
    throw new UnsafeYamlError(`nests YAML collections more than ${VNFD_LIMITS.maxDepth} levels deep once aliases are expanded`, where);
  return value;
}
