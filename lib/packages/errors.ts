// What is wrong with a VNF package, and where. Onboarding turns a PackageError into the
// package's onboardingFailureDetails (SOL005 ProblemDetails); nothing else escapes as a 500.
import type { ProblemDetails } from '#lib/sol/errors.ts';

export class PackageError extends Error {
  /** Path inside the CSAR (or "TOSCA-Metadata/TOSCA.meta:3") the problem is about, if any. */
  readonly where?: string;

  constructor(detail: string, where?: string, options?: { cause?: unknown }) {
    super(detail, options);
    this.name = 'PackageError';
    this.where = where;
  }

  toProblem(): ProblemDetails {
    return { title: 'VNF package onboarding failed', status: 422, detail: this.where ? `${this.where}: ${this.message}` : this.message };
  }
}
