// A thin Heat (orchestration v1) client: create, read, update and delete a VNF's stack (or one of
// its nested stacks), read its template, list its resources including nested stacks, and mark a
// resource unhealthy so the next update replaces it. Heat answers a GET by stack name with a 302 to
// /stacks/<name>/<id>, which fetch follows; either form of reference works everywhere here.
import * as z from 'zod';
import type { OpenStackSession } from './keystone.ts';
import { VimError } from './errors.ts';
import { log } from '#lib/log.ts';

const stackSchema = z
  .object({
    id: z.string(),
    stack_name: z.string(),
    stack_status: z.string(),
    stack_status_reason: z.string().nullish(),
    parameters: z.record(z.string(), z.unknown()).nullish(),
  })
  .passthrough();
export type HeatStack = z.infer<typeof stackSchema>;

const resourceSchema = z
  .object({
    resource_name: z.string(),
    resource_type: z.string(),
    physical_resource_id: z.string().nullish(),
    resource_status: z.string().nullish(),
    creation_time: z.string().nullish(),
    updated_time: z.string().nullish(),
    required_by: z.array(z.string()).nullish(),
    parent_resource: z.string().nullish(),
    links: z.array(z.object({ href: z.string(), rel: z.string() }).passthrough()).nullish(),
    attributes: z.record(z.string(), z.unknown()).nullish(),
  })
  .passthrough();
export type HeatResource = z.infer<typeof resourceSchema>;

export interface NewStack {
  stackName: string;
  /** The top template as text (Heat takes YAML or JSON in a string). */
  template: string;
  /** Other templates and files the top template refers to, by the name it uses. */
  files: Record<string, string>;
  parameters: Record<string, unknown>;
  disableRollback: boolean;
  timeoutMins?: number;
}

/** What a PATCH update changes; everything else (template, files, environment, other parameters) stays. */
export interface StackPatch {
  parameters: Record<string, unknown>;
  disableRollback: boolean;
  /** A new template (text, or the parsed object Heat also takes); the stack's parameters it still declares stay. */
  template?: string | Record<string, unknown>;
  /** Files added to (or replacing those of) the stack's `files`. */
  files?: Record<string, string>;
}

/** "<name>/<id>" or a bare name or id; each segment is escaped on its own. */
const stackPath = (ref: string): string => ref.split('/').map(encodeURIComponent).join('/');

export class HeatClient {
  constructor(private readonly session: OpenStackSession) {}

  /** Creates the stack; undefined if one of that name already exists (409), so a retried step can adopt it. */
  async createStack(stack: NewStack): Promise<{ id: string } | undefined> {
    const what = `creating stack ${stack.stackName}`;
    const response = await this.session.request('heat', 'orchestration', '/stacks', {
      method: 'POST',
      what,
      accept: [201, 409],
      json: {
        stack_name: stack.stackName,
        template: stack.template,
        files: stack.files,
        parameters: stack.parameters,
        disable_rollback: stack.disableRollback,
        ...(stack.timeoutMins !== undefined ? { timeout_mins: stack.timeoutMins } : {}),
      },
    });
    if (response.status === 409) {
      await response.body?.cancel();
      return undefined;
    }
    const body = await this.session.json('heat', response, z.object({ stack: z.object({ id: z.string() }).passthrough() }), what);
    return { id: body.stack.id };
  }

  /** The stack, or undefined when Heat does not know it (404). */
  async getStack(ref: string): Promise<HeatStack | undefined> {
    const what = `reading stack ${ref}`;
    const response = await this.session.request('heat', 'orchestration', `/stacks/${stackPath(ref)}`, { what, accept: [200, 404] });
    if (response.status === 404) {
      await response.body?.cancel();
      return undefined;
    }
    return (await this.session.json('heat', response, z.object({ stack: stackSchema }), what)).stack;
  }

  /**
   * Starts an update that keeps what the request does not name (PATCH, what `openstack stack update
   * --existing` sends). Heat answers 202 and the stack goes UPDATE_IN_PROGRESS: true. A 409 because an
   * action is in progress answers false: under the instance's lock that action is this operation's own
   * update, asked again by a step resumed after a crash (Heat took the first request, the step died
   * before recording it), and is polled like one just started. Other 409s and validation errors throw.
   */
  async patchStack(ref: string, patch: StackPatch): Promise<boolean> {
    let response: Response;
    try {
      response = await this.session.request('heat', 'orchestration', `/stacks/${stackPath(ref)}`, {
        method: 'PATCH',
        what: `updating stack ${ref}`,
        accept: [202],
        json: {
          parameters: patch.parameters,
          disable_rollback: patch.disableRollback,
          ...(patch.template !== undefined ? { template: patch.template } : {}),
          ...(patch.files !== undefined ? { files: patch.files } : {}),
        },
      });
    } catch (error) {
      if (error instanceof VimError && error.vimStatus === 409 && /in progress/i.test(error.vimMessage ?? '')) {
        log.warn('stack update asked again while an update is in progress: polling the one under way', { stack: ref });
        return false;
      }
      throw error;
    }
    await response.body?.cancel();
    return true;
  }

  /** The stack's template as Heat holds it (parsed). */
  async getTemplate(ref: string): Promise<Record<string, unknown>> {
    const what = `reading the template of stack ${ref}`;
    const response = await this.session.request('heat', 'orchestration', `/stacks/${stackPath(ref)}/template`, { what });
    return this.session.json('heat', response, z.record(z.string(), z.unknown()), what);
  }

  /** Marks a resource CHECK_FAILED: the next stack update replaces it, and a scaling group removes such members first. */
  async markUnhealthy(stackRef: string, resourceName: string, reason: string): Promise<void> {
    const response = await this.session.request('heat', 'orchestration', `/stacks/${stackPath(stackRef)}/resources/${encodeURIComponent(resourceName)}`, {
      method: 'PATCH',
      what: `marking resource ${resourceName} of stack ${stackRef} unhealthy`,
      accept: [200, 204],
      json: { mark_unhealthy: true, resource_status_reason: reason },
    });
    await response.body?.cancel();
  }

  /** Starts deleting the stack; false if it does not exist. */
  async deleteStack(ref: string): Promise<boolean> {
    const response = await this.session.request('heat', 'orchestration', `/stacks/${stackPath(ref)}`, {
      method: 'DELETE',
      what: `deleting stack ${ref}`,
      accept: [204, 200, 202, 404],
    });
    await response.body?.cancel();
    return response.status !== 404;
  }

  /** Resources of the stack and of its nested stacks down to `nestedDepth`; with their `attributes` when `withDetail`. */
  async listResources(ref: string, nestedDepth: number, withDetail = false): Promise<HeatResource[]> {
    const what = `listing the resources of stack ${ref}`;
    const response = await this.session.request(
      'heat',
      'orchestration',
      `/stacks/${stackPath(ref)}/resources?nested_depth=${nestedDepth}${withDetail ? '&with_detail=true' : ''}`,
      { what },
    );
    return (await this.session.json('heat', response, z.object({ resources: z.array(resourceSchema) }), what)).resources;
  }
}

/** "<stack name>/<stack id>" of the stack a resource belongs to, from its "stack" link (as Tacker records it). */
export function resourceStackId(resource: HeatResource): string | undefined {
  const link = resource.links?.find((candidate) => candidate.rel === 'stack');
  if (!link) return undefined;
  const segments = new URL(link.href, 'http://heat.invalid').pathname.split('/').filter(Boolean).map(decodeURIComponent);
  return segments.length >= 2 ? `${segments[segments.length - 2]}/${segments[segments.length - 1]}` : undefined;
}
