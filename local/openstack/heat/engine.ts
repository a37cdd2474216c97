// The Heat engine: validates a stack synchronously (as heat-api does before answering 201/400),
// then runs its actions in the background: CREATE walks the dependency graph creating resources
// in parallel as their dependencies complete; UPDATE creates, updates in place or replaces each
// resource of the new template and deletes what it dropped; DELETE goes in reverse dependency
// order. Nested stacks (template resources, scaling groups) are stacks of their own, driven by
// the parent's action. Failures compose Heat's reason chain; each action's work time is recorded.
import { performance } from 'node:perf_hooks';
import type { Token } from '../keystone.ts';
import { Aborted, ApiError, isRecord, shortId, SimulatorClosed, uuid, type Cloud } from '../state.ts';
import { containsDeferred, DEFERRED, deepEqual, evaluateCondition, invalidTemplate, references, resolve, type ResolveContext } from './functions.ts';
import {
  NestedFailure,
  PluginError,
  Resource,
  resourceFailureText,
  Stack,
  StackFailure,
  type Action,
  type HeatEvent,
  type Operation,
  type PluginContext,
  type ResourceDef,
  type ResourcePlugin,
  type Status,
  type ValidateContext,
  type WorkRecord,
} from './model.ts';
import { BUILTIN, templateResourcePlugin } from './resources.ts';
import {
  mergeEnvironments,
  paramSchemas,
  parseDocument,
  parseEnvironment,
  resolveParams,
  templateVersion,
  type Environment,
  type Template,
} from './template.ts';

/** Engine overheads (ms before timeScale): per resource action, and per stack action. */
const RESOURCE_OVERHEAD_MS = 100;
const STACK_OVERHEAD_MS = 100;
const MAX_NESTING = 5;
const STACK_NAME = /^[a-zA-Z][a-zA-Z0-9_.-]{0,254}$/;

/** A deployment waiting for (or having had) its signal. */
export interface Deployment {
  id: string;
  stack: Stack;
  resourceName: string;
  state: 'waiting' | 'complete' | 'failed' | 'idle';
  pending: Record<string, unknown> | undefined;
  wake: (() => void) | undefined;
}

/** What a stack is made of, before it exists (used to validate, then to build). */
export interface StackSpec {
  name: string;
  projectId: string;
  template: Template;
  version: number;
  files: Record<string, string>;
  env: Environment;
  params: Map<string, unknown>;
}

export interface CreateRequest {
  stack_name?: unknown;
  template?: unknown;
  parameters?: unknown;
  files?: unknown;
  environment?: unknown;
  environment_files?: unknown;
  timeout_mins?: unknown;
  disable_rollback?: unknown;
  tags?: unknown;
  template_url?: unknown;
  clear_parameters?: unknown;
}

export class HeatEngine {
  /** Every stack ever created, by id (deleted ones stay, as Heat's soft delete keeps them). */
  readonly stacks = new Map<string, Stack>();
  readonly deployments = new Map<string, Deployment>();
  readonly #templatePlugins = new Map<string, ResourcePlugin>();

  /** @param retryLimit Heat's action_retry_limit (default 5). */
  constructor(
    readonly cloud: Cloud,
    readonly retryLimit = 5,
  ) {}

  // -------------------------------------------------------------------------------------------
  // Lookups.

  /** A live stack of the project by name or id. */
  lookup(projectId: string, nameOrId: string): Stack | undefined {
    const byId = this.stacks.get(nameOrId);
    if (byId && !byId.deleted && byId.projectId === projectId) return byId;
    for (const s of this.stacks.values()) if (!s.deleted && s.projectId === projectId && s.name === nameOrId) return s;
    return undefined;
  }

  live(): Stack[] {
    return [...this.stacks.values()].filter((s) => !s.deleted);
  }

  // -------------------------------------------------------------------------------------------
  // Plugins and definitions.

  /** The plugin for a resource type: environment mapping, built-in, or a template file; else Heat's 400. */
  plugin(type: string, files: Record<string, string>, env: Environment): ResourcePlugin {
    let current = type;
    for (let hops = 0; hops < 5; hops++) {
      const mapped = env.resource_registry[current];
      if (typeof mapped !== 'string' || mapped === current) break;
      current = mapped;
    }
    const builtin = BUILTIN[current];
    if (builtin) return builtin;
    const file = files[current];
    if (file !== undefined) {
      const key = `${current}\u0000${file}`;
      let plugin = this.#templatePlugins.get(key);
      if (!plugin) {
        const template = parseDocument(file, 'template');
        templateVersion(template);
        plugin = templateResourcePlugin(template);
        this.#templatePlugins.set(key, plugin);
      }
      return plugin;
    }
    if (/\.(yaml|template)$/.test(current) || current.includes('://')) {
      throw invalidTemplate(`Could not fetch remote template "${current}": Invalid URL scheme`);
    }
    throw invalidTemplate(`The Resource Type (${current}) could not be found.`);
  }

  /** Active resource definitions of a template (conditions applied), with Heat's keyword checks. */
  definitions(template: Template, _version: number, conditions: Map<string, boolean>): Map<string, ResourceDef> {
    const out = new Map<string, ResourceDef>();
    const resources = isRecord(template.resources) ? template.resources : {};
    for (const [name, raw] of Object.entries(resources)) {
      if (!isRecord(raw)) throw invalidTemplate(`Resource ${name} is not a map`);
      for (const key of Object.keys(raw)) {
        if (!['type', 'properties', 'metadata', 'depends_on', 'deletion_policy', 'update_policy', 'description', 'condition', 'external_id'].includes(key)) {
          throw invalidTemplate(`"${key}" is not a valid keyword inside a resource definition`);
        }
      }
      if (raw.condition !== undefined) {
        const active =
          typeof raw.condition === 'boolean'
            ? raw.condition
            : typeof raw.condition === 'string'
              ? conditions.get(raw.condition)
              : conditions.get(`resources.${name}.condition`);
        if (active === undefined) throw invalidTemplate(`Invalid condition "${String(raw.condition)}" (in resources.${name}.condition)`);
        if (!active) continue;
      }
      if (raw.type === undefined || raw.type === null || raw.type === '') throw invalidTemplate(`Resource "${name}" has no type`);
      if (typeof raw.type !== 'string') throw invalidTemplate(`Resource "${name}" type is not a string`);
      if (raw.properties !== undefined && raw.properties !== null && !isRecord(raw.properties)) {
        throw invalidTemplate(`"properties" must be a map (in resources.${name})`);
      }
      const dependsOn =
        raw.depends_on === undefined || raw.depends_on === null ? [] : Array.isArray(raw.depends_on) ? raw.depends_on.map(String) : [String(raw.depends_on)];
      const policy = raw.deletion_policy === undefined ? 'Delete' : String(raw.deletion_policy);
      if (policy !== 'Delete' && policy !== 'Retain' && policy !== 'Snapshot') throw invalidTemplate(`Invalid deletion policy "${policy}"`);
      out.set(name, { name, type: raw.type, properties: raw.properties ?? {}, dependsOn, metadata: raw.metadata ?? {}, deletionPolicy: policy });
    }
    return out;
  }

  /**
   * Direct dependencies of a definition among `names`: explicit, via get_resource/get_attr, and
   * Heat's implicit ones (a port or server on a network waits for that network's subnets).
   */
  dependencies(def: ResourceDef, version: number, names: Set<string>, defs?: Iterable<ResourceDef>): string[] {
    const refs = references(def.properties, version);
    for (const d of def.dependsOn) refs.add(d);
    if (defs && isRecord(def.properties)) {
      const props = def.properties;
      const networks: unknown[] = [];
      if (def.type === 'OS::Neutron::Port') networks.push(props.network ?? props.network_id);
      if (def.type === 'OS::Nova::Server' && Array.isArray(props.networks)) {
        for (const n of props.networks) if (isRecord(n) && !n.port) networks.push(n.network ?? n.uuid);
      }
      for (const other of defs) {
        if (other.type !== 'OS::Neutron::Subnet' || !isRecord(other.properties)) continue;
        const net = other.properties.network ?? other.properties.network_id;
        if (net !== undefined && networks.some((n) => n !== undefined && deepEqual(n, net))) refs.add(other.name);
      }
    }
    return [...refs].filter((r) => names.has(r) && r !== def.name);
  }

  /** Topological order; a cycle is Heat's "Circular Dependency Found". */
  order(defs: Map<string, ResourceDef>, version: number): string[] {
    const names = new Set(defs.keys());
    const out: string[] = [];
    const state = new Map<string, 'visiting' | 'done'>();
    const visit = (name: string, trail: string[]) => {
      const s = state.get(name);
      if (s === 'done') return;
      if (s === 'visiting')
        throw invalidTemplate(`Circular Dependency Found: ${[...trail.slice(trail.indexOf(name)), name].join(' -> ')}`, 'CircularDependencyException');
      state.set(name, 'visiting');
      const def = defs.get(name) as ResourceDef;
      for (const dep of this.dependencies(def, version, names, defs.values())) visit(dep, [...trail, name]);
      state.set(name, 'done');
      out.push(name);
    };
    for (const name of names) visit(name, []);
    return out;
  }

  evaluateConditions(template: Template, version: number, params: Map<string, unknown>, pseudo: Record<string, unknown>): Map<string, boolean> {
    const raw = isRecord(template.conditions) ? template.conditions : {};
    const out = new Map<string, boolean>();
    const evaluating = new Set<string>();
    const ctx: ResolveContext = {
      version,
      param: (name) => {
        if (name in pseudo) return pseudo[name];
        if (!params.has(name)) throw invalidTemplate(`The Parameter (${name}) was not provided.`, 'UserParameterMissing');
        return params.get(name);
      },
      resource: () => {
        throw invalidTemplate('get_resource is not allowed in conditions');
      },
      attribute: () => {
        throw invalidTemplate('get_attr is not allowed in conditions');
      },
      file: () => {
        throw invalidTemplate('get_file is not allowed in conditions');
      },
      condition: (name) => {
        if (out.has(name)) return out.get(name) as boolean;
        if (!(name in raw)) throw invalidTemplate(`Invalid condition "${name}"`);
        if (evaluating.has(name)) throw invalidTemplate(`Circular definition for condition "${name}"`);
        evaluating.add(name);
        const value = evaluateCondition(raw[name], ctx);
        out.set(name, value);
        return value;
      },
    };
    for (const name of Object.keys(raw)) ctx.condition(name);
    // Resources may carry a condition expression instead of a name (Heat evaluates it the same way).
    const resources = isRecord(template.resources) ? template.resources : {};
    for (const [name, def] of Object.entries(resources)) {
      if (isRecord(def) && isRecord(def.condition)) out.set(`resources.${name}.condition`, evaluateCondition(def.condition, ctx));
    }
    return out;
  }

  #custom(projectId: string): (constraint: string, value: unknown) => string | undefined {
    return (constraint, value) => {
      const ref = String(value);
      const c = this.cloud;
      switch (constraint) {
        case 'glance.image':
          return c.glance.get(ref) || c.glance.byName(ref, projectId).length > 0 ? undefined : `No images matching {'name': '${ref}'}.`;
        case 'nova.flavor':
          return c.nova.findFlavor(ref) ? undefined : `No Flavor matching {'name': '${ref}'}. (HTTP 404)`;
        case 'neutron.network':
          try {
            c.neutron.findNetwork(ref, projectId);
            return undefined;
          } catch (err) {
            return err instanceof Error ? err.message : String(err);
          }
        case 'neutron.subnet':
          try {
            c.neutron.findSubnet(ref, projectId);
            return undefined;
          } catch (err) {
            return err instanceof Error ? err.message : String(err);
          }
        case 'neutron.port':
          return c.neutron.ports.has(ref) ? undefined : `Unable to find port with name or id '${ref}'`;
        case 'cinder.volume':
          return c.cinder.volumes.has(ref) ? undefined : `Volume ${ref} could not be found.`;
        case 'nova.keypair':
          return [...c.nova.keypairs.values()].some((k) => k.name === ref) ? undefined : `The Key (${ref}) could not be found.`;
        default:
          return undefined;
      }
    };
  }

  /** Typed parameters of a template for a project. */
  params(template: Template, user: Record<string, unknown>, env: Environment, projectId: string, strictUnknown = true): Map<string, unknown> {
    return resolveParams(template, user, env, this.#custom(projectId), strictUnknown);
  }

  /** Everything heat-api checks before it answers: references, cycles, types, properties, outputs. */
  validate(spec: StackSpec, depth = 0): void {
    if (depth > MAX_NESTING) throw invalidTemplate(`Recursion depth exceeds ${MAX_NESTING}.`);
    const pseudo = { 'OS::stack_name': spec.name, 'OS::stack_id': DEFERRED, 'OS::project_id': spec.projectId };
    const conditions = this.evaluateConditions(spec.template, spec.version, spec.params, pseudo);
    const defs = this.definitions(spec.template, spec.version, conditions);
    const names = new Set(defs.keys());
    const allNames = new Set(Object.keys(isRecord(spec.template.resources) ? spec.template.resources : {}));
    for (const def of defs.values()) {
      for (const ref of references(def.properties, spec.version)) {
        if (!allNames.has(ref)) throw invalidTemplate(`The specified reference "${ref}" (in ${def.name}) is incorrect.`, 'InvalidTemplateReference');
      }
      for (const dep of def.dependsOn) {
        if (!names.has(dep)) throw invalidTemplate(`The specified reference "${dep}" (in ${def.name}) is incorrect.`, 'InvalidTemplateReference');
      }
    }
    for (const name of names) if (spec.params.has(name)) throw invalidTemplate(`Duplicate names {'${name}'}`);
    const order = this.order(defs, spec.version);
    const plugins = new Map<string, ResourcePlugin>();
    for (const name of order) plugins.set(name, this.plugin((defs.get(name) as ResourceDef).type, spec.files, spec.env));

    const ctx: ResolveContext = {
      version: spec.version,
      param: (name) => {
        if (name in pseudo) return pseudo[name as keyof typeof pseudo];
        if (!spec.params.has(name)) throw invalidTemplate(`The Parameter (${name}) was not provided.`, 'UserParameterMissing');
        return spec.params.get(name);
      },
      resource: (name) => {
        if (!allNames.has(name)) throw invalidTemplate(`The specified reference "${name}" (in unknown) is incorrect.`, 'InvalidTemplateReference');
        return DEFERRED;
      },
      attribute: (name, attribute) => {
        if (!allNames.has(name)) throw invalidTemplate(`The specified reference "${name}" (in unknown) is incorrect.`, 'InvalidTemplateReference');
        const plugin = plugins.get(name);
        const known = plugin?.attributes ?? 'any';
        if (known !== 'any' && attribute !== 'show' && !known.includes(attribute))
          throw invalidTemplate(`The Referenced Attribute (${name} ${attribute}) is incorrect.`, 'InvalidTemplateAttribute');
        return DEFERRED;
      },
      file: (key) => {
        const content = spec.files[key];
        if (content === undefined) throw invalidTemplate(`No content found in the "files" section for get_file path: ${key}`);
        return content;
      },
      condition: (name) => {
        const value = conditions.get(name);
        if (value === undefined) throw invalidTemplate(`Invalid condition "${name}"`);
        return value;
      },
    };
    const vctx: ValidateContext = { cloud: this.cloud, engine: this, projectId: spec.projectId, files: spec.files, env: spec.env, depth, stackName: spec.name };
    for (const name of order) {
      const def = defs.get(name) as ResourceDef;
      const plugin = plugins.get(name) as ResourcePlugin;
      const props = resolve(def.properties, ctx);
      if (!isRecord(props)) throw invalidTemplate(`Property error: resources.${name}.properties: Properties must be a map`);
      if (plugin.properties !== 'any') {
        for (const key of Object.keys(props)) {
          if (!plugin.properties.includes(key)) throw invalidTemplate(`Property error: resources.${name}.properties: Unknown Property ${key}`);
        }
      }
      for (const key of plugin.required ?? []) {
        if (props[key] === undefined || props[key] === null)
          throw invalidTemplate(`Property error: resources.${name}.properties: Property ${key} not assigned`);
      }
      resolve(def.metadata, ctx);
      plugin.validate?.(vctx, name, props);
    }
    const outputs = isRecord(spec.template.outputs) ? spec.template.outputs : {};
    for (const [key, output] of Object.entries(outputs)) {
      if (!isRecord(output) || !('value' in output)) throw invalidTemplate(`Each output definition must contain a value key (outputs.${key})`);
      for (const ref of references(output.value, spec.version)) {
        if (!allNames.has(ref)) throw invalidTemplate(`The specified reference "${ref}" (in unknown) is incorrect.`, 'InvalidTemplateReference');
      }
      resolve(output.value, ctx);
    }
  }

  // -------------------------------------------------------------------------------------------
  // The API's operations.

  /** POST /stacks: validates, registers, and starts the CREATE in the background. */
  create(token: Token, req: CreateRequest): Stack {
    const projectId = token.project?.id ?? '';
    const name = req.stack_name;
    if (typeof name !== 'string' || name === '') throw new ApiError(400, 'The Parameter (stack_name) was not provided.', 'HTTPBadRequest');
    if (!STACK_NAME.test(name))
      throw new ApiError(
        400,
        `Invalid stack name ${name} must contain only alphanumeric or "_-." characters, must start with alpha and must be 255 characters or less.`,
        'StackValidationFailed',
      );
    if (this.lookup(projectId, name)) throw new ApiError(409, `The Stack (${name}) already exists.`, 'StackExists');
    if (req.template === undefined && req.template_url !== undefined)
      throw new ApiError(400, `Could not retrieve template: the simulator does not fetch template_url (${String(req.template_url)})`, 'HTTPBadRequest');
    if (req.template === undefined || req.template === null) throw new ApiError(400, 'No template specified', 'HTTPBadRequest');
    const template = parseDocument(req.template, 'template');
    const version = templateVersion(template);
    const files = filesMap(req.files);
    const env = this.#environment(req.environment, req.environment_files, files);
    const user = isRecord(req.parameters) ? req.parameters : {};
    const params = this.params(template, user, env, projectId);
    const spec: StackSpec = { name, projectId, template, version, files, env, params };
    this.validate(spec);
    const timeout = req.timeout_mins === undefined || req.timeout_mins === null ? null : Number(req.timeout_mins);
    if (timeout !== null && (!Number.isFinite(timeout) || timeout <= 0))
      throw new ApiError(400, `Invalid timeout value ${String(req.timeout_mins)}`, 'HTTPBadRequest');
    const disableRollback =
      req.disable_rollback === undefined ? true : req.disable_rollback === true || req.disable_rollback === 'true' || req.disable_rollback === 'True';
    const tags = typeof req.tags === 'string' ? req.tags.split(',') : Array.isArray(req.tags) ? req.tags.map(String) : null;
    const stack = new Stack(
      name,
      projectId,
      internalToken(token),
      null,
      template,
      version,
      files,
      env,
      user,
      params,
      paramSchemas(template),
      timeout,
      disableRollback,
      tags,
    );
    this.#populate(stack);
    this.stacks.set(stack.id, stack);
    const fault = this.cloud.faults.take('stack-create-fail');
    if (fault) stack.injected = { action: 'CREATE', reason: fault.reason ?? '' };
    this.#startTop(stack, 'CREATE', (signal) => this.#createAll(stack, signal));
    return stack;
  }

  /** PUT (replace) or PATCH (existing: keep template, merge parameters/files/environment). */
  update(stack: Stack, req: CreateRequest, patch: boolean): void {
    if (stack.status === 'IN_PROGRESS') throw new ApiError(409, `Stack ${stack.name} already has an action (${stack.action}) in progress.`, 'ActionInProgress');
    if (stack.action === 'DELETE' && stack.status === 'FAILED')
      throw new ApiError(400, `Updating a stack when it is deleting is not supported.`, 'NotSupported');
    let template = stack.template;
    if (req.template !== undefined && req.template !== null) template = parseDocument(req.template, 'template');
    else if (!patch) throw new ApiError(400, 'No template specified', 'HTTPBadRequest');
    const version = templateVersion(template);
    const newFiles = filesMap(req.files);
    const files = patch ? { ...stack.files, ...newFiles } : newFiles;
    const newEnv = this.#environment(req.environment, req.environment_files, files);
    const env = patch ? mergeEnvironments(stack.env, newEnv) : newEnv;
    let user = isRecord(req.parameters) ? { ...req.parameters } : {};
    if (patch) {
      const merged: Record<string, unknown> = { ...stack.userParams, ...user };
      if (Array.isArray(req.clear_parameters)) for (const key of req.clear_parameters) delete merged[String(key)];
      // Parameters the new template no longer declares are dropped, as Heat's PATCH does.
      const declared = paramSchemas(template);
      for (const key of Object.keys(merged)) if (!declared.has(key) && !(key in user)) delete merged[key];
      user = merged;
    }
    const params = this.params(template, user, env, stack.projectId);
    this.validate({ name: stack.name, projectId: stack.projectId, template, version, files, env, params });
    if (req.timeout_mins !== undefined && req.timeout_mins !== null) stack.timeoutMins = Number(req.timeout_mins);
    if (req.disable_rollback !== undefined) stack.disableRollback = req.disable_rollback === true || req.disable_rollback === 'true';
    if (req.tags !== undefined) stack.tags = typeof req.tags === 'string' ? req.tags.split(',') : Array.isArray(req.tags) ? req.tags.map(String) : null;
    const fault = this.cloud.faults.take('stack-update-fail');
    if (fault) stack.injected = { action: 'UPDATE', reason: fault.reason ?? '' };
    stack.updatedAt = Date.now();
    this.#startTop(stack, 'UPDATE', (signal) => this.#apply(stack, { template, version, files, env, user, params }, signal));
  }

  /** DELETE: cancels a running action, then deletes in reverse dependency order. */
  delete(stack: Stack): void {
    if (stack.action === 'DELETE' && stack.status === 'IN_PROGRESS') return;
    const fault = this.cloud.faults.take('stack-delete-fail');
    if (fault) stack.injected = { action: 'DELETE', reason: fault.reason ?? '' };
    this.#startTop(stack, 'DELETE', (signal) => this.#deleteAll(stack, signal));
  }

  /** PATCH .../resources/{name} {mark_unhealthy}: CHECK_FAILED, replaced by the next update. */
  markUnhealthy(stack: Stack, ref: string, mark: boolean, reason: string): void {
    const res = stack.resources.get(ref) ?? [...stack.resources.values()].find((r) => r.physicalId === ref && ref !== '');
    if (!res) throw new ApiError(404, `The Resource (${ref}) could not be found.`, 'EntityNotFound');
    if (res.status === 'IN_PROGRESS') throw new ApiError(409, `Stack ${stack.name} already has an action (${res.action}) in progress.`, 'ActionInProgress');
    if (mark) this.#setResource(stack, res, 'CHECK', 'FAILED', reason || 'Marked unhealthy by user');
    else if (res.action === 'CHECK' && res.status === 'FAILED') this.#setResource(stack, res, 'CHECK', 'COMPLETE', reason || 'state changed');
  }

  /** POST .../resources/{name}/signal. */
  signal(stack: Stack, ref: string, body: unknown): void {
    const res = stack.resources.get(ref);
    if (!res) throw new ApiError(404, `The Resource (${ref}) could not be found.`, 'EntityNotFound');
    const handler = res.plugin.signal;
    if (!handler || res.action === 'INIT') throw new ApiError(400, `Signal resource during ${res.action} is not supported.`, 'ResourceActionNotSupported');
    const ctx = this.#pctx(stack, new AbortController().signal);
    this.cloud.sched.spawn(() => handler.call(res.plugin, ctx, res, body));
  }

  /** The control API's deployment signal. */
  signalDeployment(id: string, body: Record<string, unknown>): boolean {
    const dep = this.deployments.get(id);
    if (!dep) return false;
    dep.pending = body;
    dep.wake?.();
    this.cloud.sched.changed();
    return true;
  }

  // -------------------------------------------------------------------------------------------
  // Nested stacks (driven by plugins inside the parent's action).

  nestedSpec(parent: Stack, resourceName: string, template: Template, user: Record<string, unknown>): StackSpec {
    const version = templateVersion(template);
    const env: Environment = { parameters: {}, parameter_defaults: parent.env.parameter_defaults, resource_registry: parent.env.resource_registry };
    const params = this.params(template, user, env, parent.projectId, false);
    return { name: `${parent.name}-${resourceName}-${shortId()}`, projectId: parent.projectId, template, version, files: parent.files, env, params };
  }

  /** Creates a nested stack and runs its CREATE; throws NestedFailure when it ends FAILED. */
  async createNested(
    parent: Stack,
    res: Resource,
    template: Template,
    user: Record<string, unknown>,
    signal: AbortSignal,
    onCreated: (stack: Stack) => void,
  ): Promise<Stack> {
    const spec = this.nestedSpec(parent, res.name, template, user);
    const stack = new Stack(
      spec.name,
      spec.projectId,
      parent.owner,
      { stack: parent, resourceName: res.name },
      spec.template,
      spec.version,
      spec.files,
      spec.env,
      user,
      spec.params,
      paramSchemas(template),
      null,
      true,
      null,
    );
    this.#populate(stack);
    this.stacks.set(stack.id, stack);
    onCreated(stack);
    await this.#run(stack, 'CREATE', (s) => this.#createAll(stack, s), signal);
    return stack;
  }

  /** Updates a nested stack to a new template/parameters; throws NestedFailure when it ends FAILED. */
  async updateNested(stack: Stack, template: Template, user: Record<string, unknown>, signal: AbortSignal): Promise<void> {
    const version = templateVersion(template);
    const env = stack.env;
    const params = this.params(template, user, env, stack.projectId, false);
    stack.updatedAt = Date.now();
    await this.#run(stack, 'UPDATE', (s) => this.#apply(stack, { template, version, files: stack.files, env, user, params }, s), signal);
  }

  async deleteNested(stack: Stack, signal: AbortSignal): Promise<void> {
    if (stack.deleted) return;
    if (stack.op) {
      stack.op.controller.abort(new Aborted('cancelled'));
      await stack.op.done.catch(() => {});
    }
    await this.#run(stack, 'DELETE', (s) => this.#deleteAll(stack, s), signal);
  }

  // -------------------------------------------------------------------------------------------
  // Running actions.

  #startTop(stack: Stack, action: Action, body: (signal: AbortSignal) => Promise<void>): void {
    const previous = stack.op;
    if (previous) previous.controller.abort(new Aborted('cancelled'));
    // timeout_mins (Heat's default: an hour) is scaled like every other delay; timeScale 0 disables it.
    const timeoutMs = (stack.timeoutMins === null ? 3_600_000 : stack.timeoutMins * 60_000) * this.cloud.sched.timeScale;
    const run = async () => {
      if (previous) await previous.done.catch(() => {});
      await this.#run(stack, action, body, undefined, timeoutMs > 0 ? timeoutMs : undefined);
    };
    // Mark the new action at once, so a GET right after the request sees it.
    this.#begin(stack, action);
    this.cloud.sched.spawn(async () => {
      try {
        await run();
      } catch (err) {
        if (!(err instanceof NestedFailure)) throw err;
      }
    });
  }

  #begin(stack: Stack, action: Action, parentSignal?: AbortSignal): Operation {
    const controller = new AbortController();
    const signal = parentSignal ? AbortSignal.any([parentSignal, controller.signal]) : controller.signal;
    let settle!: () => void;
    const done = new Promise<void>((resolve) => {
      settle = resolve;
    });
    const record: WorkRecord = { action, status: 'IN_PROGRESS', startedAt: Date.now(), finishedAt: null, workMs: null, t0: performance.now() };
    const op: Operation = { action, controller, signal, done, record };
    (op as Operation & { settle: () => void }).settle = settle;
    stack.op = op;
    this.#setStack(stack, action, 'IN_PROGRESS', `Stack ${action} started`);
    stack.work.push(record);
    return op;
  }

  #finish(stack: Stack, op: Operation, status: Status, reason: string): void {
    (op as Operation & { settle?: () => void }).settle?.();
    const record = op.record;
    if (record && record.finishedAt === null) {
      record.status = stack.op === op ? status : 'FAILED';
      record.finishedAt = Date.now();
      record.workMs = performance.now() - record.t0;
    }
    if (stack.op !== op) return;
    stack.op = null;
    if (op.action === 'DELETE' && status === 'COMPLETE') {
      // Heat keeps a deleted stack (soft delete) but not its resources.
      stack.deleted = true;
      stack.deletedAt = Date.now();
      for (const dep of [...this.deployments.values()]) if (dep.stack === stack) this.deployments.delete(dep.id);
      stack.resources.clear();
      stack.replaced = [];
    }
    this.#setStack(stack, op.action, status, reason);
  }

  /**
   * Runs one action on a stack: IN_PROGRESS, the work, COMPLETE or FAILED with the reason.
   * An already-begun top-level op is reused. Throws NestedFailure(reason) when it FAILED.
   */
  async #run(stack: Stack, action: Action, body: (signal: AbortSignal) => Promise<void>, parentSignal?: AbortSignal, timeoutMs?: number): Promise<void> {
    const op =
      stack.op && stack.op.action === action && stack.status === 'IN_PROGRESS' && !parentSignal && !stack.op.signal.aborted
        ? stack.op
        : this.#begin(stack, action, parentSignal);
    const sched = this.cloud.sched;
    const cancelTimer = timeoutMs === undefined ? undefined : sched.timer(timeoutMs, () => op.controller.abort(new Aborted('Timed out')));
    let failure: string | undefined;
    try {
      await sched.sleep(STACK_OVERHEAD_MS, op.signal);
      await body(op.signal);
      if (op.signal.aborted) throw op.signal.reason instanceof Aborted ? op.signal.reason : new Aborted('cancelled');
    } catch (err) {
      if (err instanceof SimulatorClosed) throw err;
      if (err instanceof StackFailure) failure = err.reason;
      else if (err instanceof Aborted) failure = err.reason === 'Timed out' ? 'Timed out' : `${action} aborted`;
      else if (err instanceof NestedFailure) failure = err.reason;
      else {
        this.cloud.log(`heat: stack ${stack.name} ${action} failed unexpectedly: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
        failure = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
      }
    } finally {
      cancelTimer?.();
    }
    if (failure === undefined) {
      this.#finish(stack, op, 'COMPLETE', `Stack ${action} completed successfully`);
      return;
    }
    this.#finish(stack, op, 'FAILED', failure);
    if (action === 'CREATE' && !stack.parent && !stack.disableRollback && stack.op === null) {
      await this.#run(stack, 'ROLLBACK', (s) => this.#deleteAll(stack, s, 'ROLLBACK')).catch(() => {});
    }
    throw new NestedFailure(failure);
  }

  // -------------------------------------------------------------------------------------------
  // Traversals.

  #populate(stack: Stack): void {
    stack.conditions = this.evaluateConditions(stack.template, stack.version, stack.params, this.#pseudo(stack));
    for (const def of this.definitions(stack.template, stack.version, stack.conditions).values()) {
      stack.resources.set(def.name, new Resource(def.name, def, this.plugin(def.type, stack.files, stack.env)));
    }
  }

  #pseudo(stack: Stack): Record<string, unknown> {
    return { 'OS::stack_name': stack.name, 'OS::stack_id': stack.id, 'OS::project_id': stack.projectId };
  }

  /** Runs `work` per resource in dependency order, in parallel; stops starting new ones after a failure. */
  async #walk(names: string[], deps: (name: string) => string[], work: (name: string) => Promise<void>, signal: AbortSignal): Promise<void> {
    const done = new Map<string, Promise<void>>();
    let failure: unknown;
    for (const name of names) {
      const waitFor = deps(name)
        .map((d) => done.get(d))
        .filter((p): p is Promise<void> => p !== undefined);
      done.set(
        name,
        (async () => {
          const results = await Promise.allSettled(waitFor);
          if (failure !== undefined || signal.aborted || results.some((r) => r.status === 'rejected')) throw new Aborted('skipped');
          try {
            await work(name);
          } catch (err) {
            failure ??= err;
            throw err;
          }
        })(),
      );
    }
    await Promise.allSettled(done.values());
    if (failure !== undefined) throw failure;
    if (signal.aborted) throw signal.reason instanceof Aborted ? signal.reason : new Aborted('cancelled');
  }

  async #createAll(stack: Stack, signal: AbortSignal): Promise<void> {
    const defs = this.definitions(stack.template, stack.version, stack.conditions);
    const order = this.order(defs, stack.version);
    if (stack.injected?.action === 'CREATE') stack.injected.target = order[order.length - 1];
    const names = new Set(defs.keys());
    await this.#walk(
      order,
      (n) => this.dependencies(defs.get(n) as ResourceDef, stack.version, names, defs.values()),
      async (name) => {
        const res = stack.resources.get(name) as Resource;
        await this.#createResource(stack, res, signal);
      },
      signal,
    );
  }

  async #createResource(stack: Stack, res: Resource, signal: AbortSignal): Promise<void> {
    const sched = this.cloud.sched;
    await sched.sleep(RESOURCE_OVERHEAD_MS, signal);
    let first: unknown;
    for (let attempt = 0; ; attempt++) {
      // Heat's action_retry_limit: a resource that went to ERROR (or hit a conflict) is deleted
      // and created again after 2^n s (+ up to 2 s jitter); the first failure is what is reported.
      if (attempt > 0) await sched.sleep(backoffMs(attempt), signal);
      this.#setResource(stack, res, 'CREATE', 'IN_PROGRESS', 'state changed');
      try {
        if (stack.injected?.action === 'CREATE' && stack.injected.target === res.name) this.#injectedFailure(stack, res, 'CREATE');
        const props = this.resolveProps(stack, res.def);
        res.props = props;
        await res.plugin.create(this.#pctx(stack, signal), res, props);
        this.#setResource(stack, res, 'CREATE', 'COMPLETE', 'state changed');
        return;
      } catch (err) {
        if (!(err instanceof PluginError) || !err.retryable || attempt >= this.retryLimit) throw this.#resourceFailed(stack, res, 'CREATE', first ?? err);
        first ??= err;
        this.#setResource(stack, res, 'CREATE', 'FAILED', resourceFailureText(res.name, err));
        this.#setResource(stack, res, 'DELETE', 'IN_PROGRESS', 'state changed');
        try {
          await res.plugin.delete(this.#pctx(stack, signal), res);
        } catch (deleteError) {
          throw this.#resourceFailed(stack, res, 'DELETE', deleteError);
        }
        res.physicalId = '';
        res.data = { physicalName: res.data.physicalName };
        this.#setResource(stack, res, 'DELETE', 'COMPLETE', 'state changed');
      }
    }
  }

  #injectedFailure(stack: Stack, res: Resource, action: Action): never {
    const given = stack.injected?.reason ?? '';
    stack.injected = undefined;
    const text = `Error: resources.${res.name}: Injected fault (OpenStack simulator)`;
    throw new StackFailure(given || `Resource ${action} failed: ${text}`);
  }

  /** Marks a resource FAILED and returns the stack-level failure. */
  #resourceFailed(stack: Stack, res: Resource, action: Action, err: unknown): Error {
    if (err instanceof SimulatorClosed) return err;
    if (err instanceof StackFailure) {
      this.#setResource(stack, res, action, 'FAILED', err.reason);
      return err;
    }
    if (err instanceof Aborted) {
      this.#setResource(stack, res, action, 'FAILED', err.reason === 'Timed out' ? `${action} aborted (Timed out)` : `${action} aborted`);
      return err;
    }
    if (!(err instanceof PluginError) && !(err instanceof NestedFailure))
      this.cloud.log(`heat: ${res.type} ${res.name} ${action} failed unexpectedly: ${err instanceof Error ? err.stack : String(err)}`);
    const text = resourceFailureText(res.name, err);
    this.#setResource(stack, res, action, 'FAILED', text);
    return new StackFailure(`Resource ${action} failed: ${text}`);
  }

  /** Applies a new template/parameters to an existing stack (the UPDATE action's work). */
  async #apply(
    stack: Stack,
    next: { template: Template; version: number; files: Record<string, string>; env: Environment; user: Record<string, unknown>; params: Map<string, unknown> },
    signal: AbortSignal,
  ): Promise<void> {
    stack.template = next.template;
    stack.version = next.version;
    stack.files = next.files;
    stack.env = next.env;
    stack.userParams = next.user;
    stack.params = next.params;
    stack.schemas = paramSchemas(next.template);
    stack.conditions = this.evaluateConditions(stack.template, stack.version, stack.params, this.#pseudo(stack));
    const defs = this.definitions(stack.template, stack.version, stack.conditions);
    const order = this.order(defs, stack.version);
    const names = new Set(defs.keys());
    if (stack.injected?.action === 'UPDATE') stack.injected.target = order[order.length - 1];
    await this.#walk(
      order,
      (n) => this.dependencies(defs.get(n) as ResourceDef, stack.version, names, defs.values()),
      async (name) => {
        const def = defs.get(name) as ResourceDef;
        const existing = stack.resources.get(name);
        if (!existing || existing.action === 'INIT' || (existing.action === 'DELETE' && existing.status === 'COMPLETE')) {
          const res = new Resource(name, def, this.plugin(def.type, stack.files, stack.env));
          stack.resources.set(name, res);
          await this.#createResource(stack, res, signal);
        } else await this.#updateResource(stack, existing, def, signal);
      },
      signal,
    );
    // What the new template dropped, and what was replaced, goes now.
    const removed = [...stack.resources.values()].filter((r) => !defs.has(r.name));
    for (const r of removed) stack.resources.delete(r.name);
    const leftovers = [...removed, ...stack.replaced];
    stack.replaced = [];
    try {
      await this.#deleteSet(stack, leftovers, signal, 'DELETE');
    } catch (err) {
      stack.replaced.push(...leftovers.filter((r) => !(r.action === 'DELETE' && r.status === 'COMPLETE')));
      throw err;
    }
  }

  async #updateResource(stack: Stack, res: Resource, def: ResourceDef, signal: AbortSignal): Promise<void> {
    const plugin = this.plugin(def.type, stack.files, stack.env);
    const unhealthy = res.action === 'CHECK' && res.status === 'FAILED';
    const failedCreate = res.status === 'FAILED' && (res.action === 'CREATE' || res.action === 'DELETE');
    let replace = res.type !== def.type || unhealthy || failedCreate;
    if (!replace) {
      const after = this.resolveProps(stack, def);
      const injected = stack.injected?.action === 'UPDATE' && stack.injected.target === res.name;
      if (!plugin.nested && !injected && deepEqual(after, res.props)) {
        res.def = def;
        return;
      }
      const changed = Object.keys({ ...after, ...res.props }).filter((k) => !deepEqual(after[k], res.props[k]));
      const allowed = plugin.updateAllowed ?? [];
      replace = !plugin.nested && allowed !== 'all' && changed.some((k) => !allowed.includes(k));
      if (!replace) {
        await this.cloud.sched.sleep(RESOURCE_OVERHEAD_MS, signal);
        this.#setResource(stack, res, 'UPDATE', 'IN_PROGRESS', 'state changed');
        try {
          if (injected) this.#injectedFailure(stack, res, 'UPDATE');
          const outcome = plugin.update ? await plugin.update(this.#pctx(stack, signal), res, res.props, after) : 'replace';
          if (outcome !== 'replace') {
            res.props = after;
            res.def = def;
            this.#setResource(stack, res, 'UPDATE', 'COMPLETE', 'state changed');
            return;
          }
        } catch (err) {
          throw this.#resourceFailed(stack, res, 'UPDATE', err);
        }
      }
    }
    // Replacement: a new resource of the same name is created first; the old one goes at the end.
    if (res.physicalId && res.plugin.prepareForReplace) {
      try {
        await res.plugin.prepareForReplace(this.#pctx(stack, signal), res);
      } catch (err) {
        throw this.#resourceFailed(stack, res, 'UPDATE', err);
      }
    }
    const fresh = new Resource(res.name, def, plugin);
    stack.resources.set(res.name, fresh);
    stack.replaced.push(res);
    await this.#createResource(stack, fresh, signal);
  }

  async #deleteAll(stack: Stack, signal: AbortSignal, action: Action = 'DELETE'): Promise<void> {
    const all = [...stack.resources.values(), ...stack.replaced];
    await this.#deleteSet(stack, all, signal, action);
    stack.replaced = [];
  }

  /** Deletes resources, each after everything that depends on it. */
  async #deleteSet(stack: Stack, resources: Resource[], signal: AbortSignal, action: Action): Promise<void> {
    if (resources.length === 0) return;
    const names = new Set(resources.map((r) => r.name));
    const dependents = new Map<Resource, Resource[]>();
    for (const r of resources) dependents.set(r, []);
    for (const r of resources) {
      for (const dep of this.dependencies(
        r.def,
        stack.version,
        names,
        resources.map((x) => x.def),
      )) {
        for (const target of resources) if (target.name === dep && target !== r) dependents.get(target)?.push(r);
      }
    }
    // Reverse topological order over the dependents relation (a resource and its replacement share a name).
    const keys = resources.map((_, i) => String(i));
    const index = new Map(resources.map((r, i) => [r, String(i)]));
    const byKey = new Map(resources.map((r, i) => [String(i), r]));
    const ordered: string[] = [];
    const seen = new Set<string>();
    const visit = (key: string) => {
      if (seen.has(key)) return;
      seen.add(key);
      for (const d of dependents.get(byKey.get(key) as Resource) ?? []) visit(index.get(d) as string);
      ordered.push(key);
    };
    for (const key of keys) visit(key);
    if (stack.injected?.action === 'DELETE') stack.injected.target = byKey.get(ordered[0] as string)?.name;
    await this.#walk(
      ordered,
      (key) => (dependents.get(byKey.get(key) as Resource) ?? []).map((d) => index.get(d) as string),
      async (key) => {
        await this.#deleteResource(stack, byKey.get(key) as Resource, signal, action);
      },
      signal,
    );
  }

  async #deleteResource(stack: Stack, res: Resource, signal: AbortSignal, _action: Action): Promise<void> {
    if (res.action === 'INIT' || (res.action === 'DELETE' && res.status === 'COMPLETE')) {
      if (res.action !== 'INIT') return;
      this.#setResource(stack, res, 'DELETE', 'COMPLETE', 'state changed');
      return;
    }
    await this.cloud.sched.sleep(RESOURCE_OVERHEAD_MS, signal);
    this.#setResource(stack, res, 'DELETE', 'IN_PROGRESS', 'state changed');
    for (let attempt = 0; ; attempt++) {
      // Heat retries a delete that hit a conflict (a subnet still in use...) with backoff.
      if (attempt > 0) await this.cloud.sched.sleep(backoffMs(attempt), signal);
      try {
        if (stack.injected?.action === 'DELETE' && stack.injected.target === res.name) this.#injectedFailure(stack, res, 'DELETE');
        if (res.def.deletionPolicy !== 'Retain') await res.plugin.delete(this.#pctx(stack, signal), res);
        this.#setResource(stack, res, 'DELETE', 'COMPLETE', 'state changed');
        return;
      } catch (err) {
        if (err instanceof PluginError && err.status === 409 && attempt < this.retryLimit) continue;
        throw this.#resourceFailed(stack, res, 'DELETE', err);
      }
    }
  }

  // -------------------------------------------------------------------------------------------
  // Resolution at run time.

  #pctx(stack: Stack, signal: AbortSignal): PluginContext {
    return { cloud: this.cloud, engine: this, stack, signal };
  }

  runtimeContext(stack: Stack): ResolveContext {
    const pseudo = this.#pseudo(stack);
    return {
      version: stack.version,
      param: (name) => {
        if (name in pseudo) return pseudo[name];
        if (!stack.params.has(name)) throw invalidTemplate(`The Parameter (${name}) was not provided.`, 'UserParameterMissing');
        return stack.params.get(name);
      },
      resource: (name) => {
        const res = stack.resources.get(name);
        if (!res || res.action === 'INIT') return null;
        return res.plugin.refId ? res.plugin.refId(res) : res.physicalId || null;
      },
      attribute: (name, attribute, path) => {
        const res = stack.resources.get(name);
        if (!res || res.action === 'INIT' || (res.action === 'DELETE' && res.status === 'COMPLETE')) return null;
        return this.attribute(stack, res, attribute, path);
      },
      file: (key) => {
        const content = stack.files[key];
        if (content === undefined) throw invalidTemplate(`No content found in the "files" section for get_file path: ${key}`);
        return content;
      },
      condition: (name) => stack.conditions.get(name) ?? false,
    };
  }

  attribute(stack: Stack, res: Resource, attribute: string, path: unknown[]): unknown {
    const ctx = this.#pctx(stack, new AbortController().signal);
    if (!res.plugin.attribute) return null;
    return res.plugin.attribute(ctx, res, attribute, path);
  }

  resolveProps(stack: Stack, def: ResourceDef): Record<string, unknown> {
    const props = resolve(def.properties, this.runtimeContext(stack));
    if (containsDeferred(props)) throw new PluginError('Error', 'unresolved reference');
    return isRecord(props) ? props : {};
  }

  outputs(stack: Stack): Array<{ output_key: string; output_value: unknown; description: string; output_error?: string }> {
    const outputs = isRecord(stack.template.outputs) ? stack.template.outputs : {};
    const ctx = this.runtimeContext(stack);
    return Object.entries(outputs).map(([key, output]) => {
      const o = isRecord(output) ? output : {};
      const description = typeof o.description === 'string' ? o.description : 'No description given';
      try {
        return { output_key: key, output_value: resolve(o.value, ctx) ?? null, description };
      } catch (err) {
        return { output_key: key, output_value: null, description, output_error: err instanceof Error ? err.message : String(err) };
      }
    });
  }

  // -------------------------------------------------------------------------------------------
  // State changes and events.

  #setStack(stack: Stack, action: Action, status: Status, reason: string): void {
    stack.action = action;
    stack.status = status;
    stack.reason = reason;
    this.#event(stack, stack.name, stack.id, action, status, reason, 'OS::Heat::Stack');
    this.cloud.log(`heat: stack ${stack.name} ${action}_${status}${status === 'FAILED' ? `: ${reason}` : ''}`);
    this.cloud.sched.changed();
  }

  #setResource(stack: Stack, res: Resource, action: Action, status: Status, reason: string): void {
    res.action = action;
    res.status = status;
    res.reason = reason;
    res.updatedAt = Date.now();
    this.#event(stack, res.name, res.physicalId, action, status, reason, res.type);
    this.cloud.sched.changed();
  }

  #event(stack: Stack, resourceName: string, physicalId: string, action: Action, status: Status, reason: string, resourceType: string): void {
    const event: HeatEvent = { id: uuid(), time: Date.now(), resourceName, physicalId, action, status, reason, resourceType };
    stack.events.push(event);
  }

  #environment(environment: unknown, environmentFiles: unknown, files: Record<string, string>): Environment {
    let env = parseEnvironment(environment);
    if (Array.isArray(environmentFiles)) {
      for (const name of environmentFiles) {
        const content = files[String(name)];
        if (content === undefined) throw new ApiError(400, `No content found in the "files" section for environment file ${String(name)}`, 'HTTPBadRequest');
        env = mergeEnvironments(env, parseEnvironment(content));
      }
    }
    return env;
  }
}

/** Heat's retry_backoff_delay: 2^attempt seconds plus up to 2 s of jitter (scaled by the scheduler). */
function backoffMs(attempt: number): number {
  return (2 ** attempt + Math.random() * 2) * 1000;
}

function filesMap(files: unknown): Record<string, string> {
  if (files === undefined || files === null) return {};
  if (!isRecord(files)) throw new ApiError(400, 'The "files" parameter must be a map of file names to contents', 'HTTPBadRequest');
  const out: Record<string, string> = {};
  for (const [name, content] of Object.entries(files)) out[name] = typeof content === 'string' ? content : JSON.stringify(content);
  return out;
}

/** The credentials Heat acts with in the background: the creator's, without expiry (Heat uses trusts). */
function internalToken(token: Token): Token {
  return { ...token, id: `heat-trust-${uuid()}`, expiresAt: Number.MAX_SAFE_INTEGER, revoked: false };
}
