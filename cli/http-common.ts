// What the CLI's client (cli/client.ts) and the web console's fetch wrapper (console/api.ts) both
// need of the API's HTTP conventions, free of Node and of the DOM: the SOL013 Version header each
// API family wants, and the one line a failed answer (ProblemDetails or OAuth's error) reads as.

/** SOL013 4.9: the Version each path's API wants (required on /vnflcm/v2, /vnffm/v1 and /vnfpm/v2). */
export function apiVersionFor(path: string): string | undefined {
  if (path.startsWith('/vnflcm/v2/')) return '2.0.0';
  if (path.startsWith('/vnflcm/v1/')) return '1.3.0';
  if (path.startsWith('/vnffm/v1/')) return '1.5.0';
  if (path.startsWith('/vnfpm/v2/')) return '2.2.0';
  if (path.startsWith('/vnfpkgm/v2/')) return '2.1.0';
  if (path.startsWith('/vnfpkgm/v1/')) return '1.3.0';
  return undefined;
}

/** `Error <status>: <title>: <detail>`, with what there is when the answer is no ProblemDetails. */
export function problemLine(status: number, statusText: string, problem: Record<string, unknown> | undefined, text = ''): string {
  const title = typeof problem?.title === 'string' ? problem.title : statusText || 'Error';
  // The token endpoint answers OAuth's {"error", "error_description"} (RFC 6749 5.2), not ProblemDetails.
  const detail =
    typeof problem?.detail === 'string'
      ? problem.detail
      : typeof problem?.error === 'string'
        ? [problem.error, problem.error_description].filter((part) => typeof part === 'string').join(': ')
        : text.trim().slice(0, 500);
  return detail ? `Error ${status}: ${title}: ${detail}` : `Error ${status}: ${title}`;
}
