// The Heat engine's data: stacks, resources, their action/status pairs, events and work-time
// records, the resource plugin contract, and the failures that compose Heat's reason chains
// ("Resource CREATE failed: ResourceInError: resources.VDU1.resources.x: Went to status ERROR ...").
import type { Cloud } from '../state.ts';
import { uuid } from '../state.ts';
import type { Token } from '../keystone.ts';
import type { Environment, ParamSchema, Template } from './template.ts';
import type { HeatEngine } from './engine.ts';

export type Action = 'INIT' | 'CREATE' | 'UPDATE' | 'DELETE' | 'ROLLBACK' | 'CHECK' | 'SIGNAL';
export type Status = 'IN_PROGRESS' | 'COMPLETE' | 'FAILED';

export interface ResourceDef {
  name: string;
  type: string;
  properties: unknown;
  dependsOn: string[];
  metadata: unknown;
  deletionPolicy: 'Delete' | 'Retain' | 'Snapshot';
}

export interface HeatEvent {
  id: string;
  time: number;
  resourceName: string;
  physicalId: string;
  action: Action;
  status: Status;
  reason: string;
  resourceType: string;
}

/** One stack action, first IN_PROGRESS to its end, in wall-clock ms (performance.now for the span). */
export interface WorkRecord {
  action: Action;
  status: Status;
  startedAt: number;
  finishedAt: number | null;
  /** Precise duration; null while in progress. */
  workMs: number | null;
  t0: number;
}

export interface Operation {
  action: Action;
  controller: AbortController;
  signal: AbortSignal;
  done: Promise<void>;
  record: WorkRecord;
}

export class Resource {
  readonly uuid = uuid();
  physicalId = '';
  action: Action = 'INIT';
  status: Status = 'COMPLETE';
  reason = '';
  readonly createdAt = Date.now();
  updatedAt: number | null = null;
  /** Properties as last applied (resolved). */
  props: Record<string, unknown> = {};
  /** Plugin-private state (nested stack id, group capacity, ...). */
  data: Record<string, unknown> = {};

  constructor(
    readonly name: string,
    public def: ResourceDef,
    public plugin: ResourcePlugin,
  ) {}

  get type(): string {
    return this.def.type;
  }

  get state(): string {
    return `${this.action}_${this.status}`;
  }
}

export class Stack {
  readonly id = uuid();
  action: Action = 'INIT';
  status: Status = 'COMPLETE';
  reason = 'Stack INIT completed successfully';
  readonly createdAt = Date.now();
  updatedAt: number | null = null;
  deletedAt: number | null = null;
  readonly resources = new Map<string, Resource>();
  /** Resources replaced by an update, deleted at its end (or with the stack). */
  replaced: Resource[] = [];
  readonly events: HeatEvent[] = [];
  readonly work: WorkRecord[] = [];
  op: Operation | null = null;
  deleted = false;
  conditions = new Map<string, boolean>();
  /** An injected failure for the next action of this kind, with its verbatim reason. */
  injected: { action: Action; reason: string; target?: string } | undefined;

  constructor(
    public name: string,
    readonly projectId: string,
    readonly owner: Token,
    readonly parent: { stack: Stack; resourceName: string } | null,
    public template: Template,
    public version: number,
    public files: Record<string, string>,
    public env: Environment,
    public userParams: Record<string, unknown>,
    public params: Map<string, unknown>,
    public schemas: Map<string, ParamSchema>,
    public timeoutMins: number | null,
    public disableRollback: boolean,
    public tags: string[] | null,
  ) {}

  get state(): string {
    return `${this.action}_${this.status}`;
  }

  get root(): Stack {
    let s: Stack = this;
    while (s.parent) s = s.parent.stack;
    return s;
  }
}

/** What a plugin gets while acting on a resource. */
export interface PluginContext {
  cloud: Cloud;
  engine: HeatEngine;
  stack: Stack;
  /** Aborted when the stack action is cancelled (a delete came) or times out. */
  signal: AbortSignal;
}

/** What a plugin gets while validating (before anything exists). */
export interface ValidateContext {
  cloud: Cloud;
  engine: HeatEngine;
  projectId: string;
  files: Record<string, string>;
  env: Environment;
  depth: number;
  stackName: string;
}

export interface ResourcePlugin {
  /** Allowed property names, or 'any'. */
  readonly properties: readonly string[] | 'any';
  readonly required?: readonly string[];
  /** Properties changeable without replacement ('all' for nested stacks, which always update). */
  readonly updateAllowed?: readonly string[] | 'all';
  /** Known attribute names, or 'any'. */
  readonly attributes?: readonly string[] | 'any';
  /** Resources that own a nested stack (always updated, never compared). */
  readonly nested?: boolean;
  validate?(ctx: ValidateContext, name: string, props: Record<string, unknown>): void;
  create(ctx: PluginContext, res: Resource, props: Record<string, unknown>): Promise<void>;
  /** In-place update; return 'replace' to have the resource replaced instead. */
  // biome-ignore lint/suspicious/noConfusingVoidType: a plugin whose update changes nothing in place returns nothing
  update?(ctx: PluginContext, res: Resource, before: Record<string, unknown>, after: Record<string, unknown>): Promise<'replace' | void>;
  delete(ctx: PluginContext, res: Resource): Promise<void>;
  /** Before a replacement is created (e.g. a server lets go of its ports so the new one can take them). */
  prepareForReplace?(ctx: PluginContext, res: Resource): Promise<void>;
  /** get_attr: the attribute `name` with `path` applied. */
  attribute?(ctx: PluginContext, res: Resource, name: string, path: unknown[]): unknown;
  /** get_resource (defaults to the physical id). */
  refId?(res: Resource): string;
  signal?(ctx: PluginContext, res: Resource, body: unknown): Promise<void>;
  nestedStackId?(res: Resource): string | undefined;
}

// ---------------------------------------------------------------------------------------------
// Failures.

/** A resource failed with a client-exception-like error type, e.g. ResourceInError, Forbidden. */
export class PluginError extends Error {
  /** `status` is the HTTP status when a service refused (409 makes Heat retry). */
  constructor(
    readonly errorType: string,
    message: string,
    readonly status?: number,
  ) {
    super(message);
  }

  /** Heat retries a resource action on ResourceInError and on conflicts (action_retry_limit). */
  get retryable(): boolean {
    return this.errorType === 'ResourceInError' || this.status === 409;
  }
}

/** A nested stack ended FAILED with `reason` (its own stack_status_reason). */
export class NestedFailure extends Error {
  constructor(readonly reason: string) {
    super(reason);
  }
}

/** A stack action failed; `reason` is the stack_status_reason. */
export class StackFailure extends Error {
  constructor(readonly reason: string) {
    super(reason);
  }
}

/** Heat's HeatExceptionWithPath formatting: digits become [n], the rest are joined with dots. */
export function formatPath(path: readonly string[]): string {
  let out = '';
  for (const item of path) {
    if (/^\d+$/.test(item)) out += `[${item}]`;
    else if (out.length > 0) out += `.${item}`;
    else out = item;
  }
  return out;
}

/** Heat's ResourceFailure rendering for resource `name` failing with `err`. */
export function resourceFailureText(name: string, err: unknown): string {
  let error = '';
  let path = ['resources', name];
  let message: string;
  if (err instanceof NestedFailure) {
    const m = /Resource [A-Z]+ failed: /.exec(err.reason);
    if (m) {
      // Heat's _from_status_reason: split on ':' -> error, dotted path, message.
      const parsed = err.reason.split(':').map((part) => part.trim());
      if (parsed.length >= 4) {
        error = parsed[1] ?? '';
        path = [...path, ...(parsed[2] ?? '').split('.')];
        message = parsed.slice(3).join(': ');
      } else message = err.reason;
    } else message = err.reason;
  } else if (err instanceof PluginError) {
    error = err.errorType;
    message = err.message;
  } else if (err instanceof Error) {
    error = 'Error';
    message = err.message;
  } else {
    error = 'Error';
    message = String(err);
  }
  return `${error ? `${error}: ` : ''}${formatPath(path)}: ${message}`;
}
