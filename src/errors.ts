/**
 * The closed catalogue of API errors and the error object, with the statuses, names and
 * numeric codes of docs/api.md#errors and docs/api.md#error-codes. Throw an `ApiError` from
 * anywhere; the HTTP error handler (`http/errors.ts`) renders it.
 */

/** One entry of `errors[]` (docs/api.md#errors). */
export interface ErrorEntry {
  name: string;
  message: string;
  propertyName?: string;
  propertyValue?: string;
  reason?: string;
  code: number;
}

/** Numeric codes (docs/api.md#error-codes) for validation failures, by rule. */
export const VALIDATION_CODES = { required: 1001, type: 1002, range: 1003, enum: 1004, format: 1005, pattern: 1006 } as const;

export class ApiError extends Error {
  readonly status: number;
  readonly entries: ErrorEntry[];
  readonly headers: Record<string, string>;
  /** RFC 6749 §5.2 fields added to the body by the token endpoint. */
  readonly oauth: { error: string; error_description: string } | undefined;

  constructor(
    status: number,
    entries: ErrorEntry[],
    options: { headers?: Record<string, string>; oauth?: { error: string; error_description: string } } = {},
  ) {
    super(entries.map((entry) => entry.message).join('; '));
    this.name = 'ApiError';
    this.status = status;
    this.entries = entries;
    this.headers = options.headers ?? {};
    this.oauth = options.oauth;
  }
}

/** What a caller says of one invalid property; `code` defaults to 1002 (type). */
export interface Invalid {
  propertyName: string;
  message: string;
  propertyValue?: unknown;
  reason?: string;
  code?: number;
}

/** Renders a value as the error object's `propertyValue` string (at most 200 characters). */
export function displayValue(value: unknown): string | undefined {
  if (value === undefined) return undefined;
  let text: string;
  try {
    text = typeof value === 'string' ? value : (JSON.stringify(value) ?? String(value));
  } catch {
    // Too deep or circular to serialize: say what it is rather than fail the error response.
    text = Array.isArray(value) ? '[array]' : `[${typeof value}]`;
  }
  return text.length > 200 ? `${text.slice(0, 197)}...` : text;
}

/** 400 ValidationError with one entry per offending property. */
export function validationError(invalid: Invalid[], status = 400): ApiError {
  return new ApiError(
    status,
    invalid.map((entry) => ({
      name: 'ValidationError',
      message: entry.message,
      propertyName: entry.propertyName,
      ...(entry.propertyValue !== undefined ? { propertyValue: displayValue(entry.propertyValue) } : {}),
      ...(entry.reason ? { reason: entry.reason } : {}),
      code: entry.code ?? VALIDATION_CODES.type,
    })),
  );
}

/** An error of one entry, with optional property name and value. */
function oneEntry(status: number, name: string, code: number) {
  return (message: string, propertyName?: string, propertyValue?: unknown): ApiError =>
    new ApiError(status, [
      {
        name,
        message,
        ...(propertyName ? { propertyName } : {}),
        ...(propertyValue !== undefined ? { propertyValue: displayValue(propertyValue) } : {}),
        code,
      },
    ]);
}

/** 401 AuthenticationError: missing, unknown or expired token; unknown or inactive contract. */
export const authenticationError = oneEntry(401, 'AuthenticationError', 2001);

/** 403 ForbiddenError: the consumer lacks access to the contract that owns the resource. */
export const forbiddenError = oneEntry(403, 'ForbiddenError', 3001);

/** 404 NotFoundError: unknown resource id, collection slug, item id or route. */
export const notFoundError = oneEntry(404, 'NotFoundError', 4001);

/** 409 ConflictError: a name already used in the contract, or a resource still referenced. */
export const conflictError = oneEntry(409, 'ConflictError', 4091);

/** 422 UnprocessableError: a resource the request names was reached but cannot be used (an article page with no text, not HTML, too large, or that robots.txt keeps Sluice from). */
export const unprocessableError = oneEntry(422, 'UnprocessableError', 4221);

/** 502 UpstreamError: a server Sluice asked on the request's behalf failed (an article page's server erring, timing out or unreachable). */
export const upstreamError = oneEntry(502, 'UpstreamError', 5021);

/** 429 RateLimitError with `Retry-After` in seconds; `message` and `propertyName` say what was refused when the caller knows. */
export function rateLimitError(retryAfterSeconds: number, message = 'Too many requests; retry later.', propertyName?: string): ApiError {
  return new ApiError(429, [{ name: 'RateLimitError', message, ...(propertyName ? { propertyName } : {}), code: 4291 }], {
    headers: { 'retry-after': String(retryAfterSeconds) },
  });
}

/** 500 InternalError; the message never carries internals. */
export function internalError(): ApiError {
  return new ApiError(500, [{ name: 'InternalError', message: 'An unexpected error occurred.', code: 5001 }]);
}
