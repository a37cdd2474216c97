// What went wrong on the VIM, said the way OpenStack said it: which service, its HTTP status and its
// own message. A ProblemError so the API and the LCM engine render it without knowing OpenStack;
// its problem status is 502 because the fault is upstream of the VNFM, whatever status the VIM used.
import { ProblemError } from '#lib/sol/errors.ts';

export type OpenStackService = 'keystone' | 'heat' | 'glance' | 'nova' | 'neutron' | 'cinder';

export interface VimErrorOptions {
  /** The VIM's HTTP status, when it answered at all. */
  vimStatus?: number;
  /** The service's own error message, verbatim. */
  vimMessage?: string;
  cause?: unknown;
}

export class VimError extends ProblemError {
  readonly service: OpenStackService;
  readonly vimStatus?: number;
  readonly vimMessage?: string;

  constructor(service: OpenStackService, detail: string, options: VimErrorOptions = {}) {
    super(502, 'VIM error', detail, {
      extra: { vimService: service, ...(options.vimStatus !== undefined ? { vimStatus: options.vimStatus } : {}) },
      cause: options.cause,
    });
    this.service = service;
    if (options.vimStatus !== undefined) this.vimStatus = options.vimStatus;
    if (options.vimMessage !== undefined) this.vimMessage = options.vimMessage;
  }
}

const MAX_MESSAGE = 1000;

/**
 * The human message inside an OpenStack error body. Each service shapes it differently: Keystone
 * {error:{message}}, Heat {explanation, error:{message}}, Nova {itemNotFound:{message}}, Neutron
 * {NeutronError:{message}}, Glance mostly plain text or HTML.
 */
export function serviceMessage(body: string): string {
  const text = body.trim();
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  const pick = (value: unknown): string | undefined => {
    if (typeof value === 'string' && value.trim()) return value.trim();
    return undefined;
  };
  if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) {
    const object = parsed as Record<string, unknown>;
    const error = object.error;
    const nested = error && typeof error === 'object' ? (error as Record<string, unknown>) : undefined;
    const found =
      pick(nested?.message) ??
      pick(object.message) ??
      pick(object.explanation) ??
      pick(object.title) ??
      pick(typeof error === 'string' ? error : undefined) ??
      Object.values(object)
        .map((value) => (value && typeof value === 'object' ? pick((value as Record<string, unknown>).message) : undefined))
        .find(Boolean);
    if (found) return truncate(found);
  }
  const plain = text
    .replace(/<[^>]*>/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
  return truncate(plain);
}

function truncate(text: string): string {
  return text.length > MAX_MESSAGE ? `${text.slice(0, MAX_MESSAGE)}…` : text;
}
