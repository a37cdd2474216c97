// Typed errors that know their SOL013 ProblemDetails (clause 6.3). lib/ throws these; the API
// error middleware renders them as application/problem+json, and the LCM engine stores the same
// ProblemDetails as VnfLcmOpOcc.error.

export interface ProblemDetails {
  type?: string;
  title?: string;
  status: number;
  detail: string;
  instance?: string;
  [extension: string]: unknown;
}

export class ProblemError extends Error {
  readonly status: number;
  readonly title: string;
  readonly extra: Record<string, unknown>;
  readonly headers: Record<string, string>;

  constructor(
    status: number,
    title: string,
    detail: string,
    options: { extra?: Record<string, unknown>; headers?: Record<string, string>; cause?: unknown } = {},
  ) {
    super(detail, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.status = status;
    this.title = title;
    this.extra = options.extra ?? {};
    this.headers = options.headers ?? {};
  }

  toProblem(): ProblemDetails {
    return { ...this.extra, title: this.title, status: this.status, detail: this.message };
  }
}

export class BadRequestError extends ProblemError {
  constructor(detail: string, extra?: Record<string, unknown>) {
    super(400, 'Bad Request', detail, { extra });
  }
}
export class NotFoundError extends ProblemError {
  constructor(detail: string) {
    super(404, 'Not Found', detail);
  }
}
export class MethodNotAllowedError extends ProblemError {
  constructor(method: string, allowed: string[]) {
    super(405, 'Method Not Allowed', `Method ${method} is not supported on this resource; allowed: ${allowed.join(', ')}`, {
      headers: { Allow: allowed.join(', ') },
    });
  }
}
export class NotAcceptableError extends ProblemError {
  constructor(detail: string) {
    super(406, 'Not Acceptable', detail);
  }
}
export class ConflictError extends ProblemError {
  constructor(detail: string) {
    super(409, 'Conflict', detail);
  }
}
export class PayloadTooLargeError extends ProblemError {
  constructor(detail: string) {
    super(413, 'Payload Too Large', detail);
  }
}
export class UnsupportedMediaTypeError extends ProblemError {
  constructor(detail: string) {
    super(415, 'Unsupported Media Type', detail);
  }
}
export class UnprocessableEntityError extends ProblemError {
  constructor(detail: string) {
    super(422, 'Unprocessable Entity', detail);
  }
}
export class InternalError extends ProblemError {
  constructor(detail: string, cause?: unknown) {
    super(500, 'Internal Server Error', detail, { cause });
  }
}
