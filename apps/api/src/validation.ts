import type { FastifyBodyParser, FastifyRequest, FastifySchemaCompiler } from 'fastify';
import type { ZodType } from 'zod';
import { DOCUMENT_LIMITS, humanErrorMap, issuesFromZodError, nestsDeeperThan, reservedKeyIssue, ROOT_PATH } from '@erg/spec';
import { errors } from './errors';

/** Validates a request part with its zod schema; failures carry our issue format (path + message). */
export const validatorCompiler: FastifySchemaCompiler<ZodType> =
  ({ schema, httpPart }) =>
  (data) => {
    const result = schema.safeParse(data, { error: humanErrorMap });
    if (result.success) return { value: result.data };
    return { error: errors.validation(httpPart === 'body' ? 'request body' : `request ${httpPart}`, issuesFromZodError(result.error)) };
  };

declare module 'fastify' {
  interface FastifyRequest {
    /** Length of the body text as received (JSON and YAML), whatever Content-Length said or did not say. */
    bodyChars?: number;
  }
}

/** The size of a request's body text: what routes compare with OFFLOAD_ABOVE. */
export function bodySize(req: FastifyRequest): number {
  return req.bodyChars ?? (typeof req.body === 'string' ? req.body.length : Number(req.headers['content-length'] ?? 0));
}

const YAML_TYPES = /^(application\/(x-)?yaml|text\/yaml)\b/;

/**
 * A campaign spec or a suite as its route received it, not validated yet: YAML text (sent with
 * Content-Type: application/yaml) or the parsed JSON value, and the size of its text.
 */
export interface SpecBody {
  value: unknown;
  yaml: boolean;
  chars: number;
}

export function specBody(req: FastifyRequest): SpecBody {
  return { value: req.body, yaml: YAML_TYPES.test(req.headers['content-type'] ?? ''), chars: bodySize(req) };
}

/**
 * Deepest nesting any JSON request body may have. The deepest body erg takes, a suite, needs 5
 * (`campaign.exclude[0].sp[0]`); recursive code downstream (JSON.stringify with indentation, the
 * YAML composer, zod) overflows its stack at a few thousand levels, which was a 500. The same
 * bound as a decoded spec's (DOCUMENT_LIMITS), so no spec passes one check and fails the other.
 */
export const MAX_JSON_DEPTH = DOCUMENT_LIMITS.maxDepth;

/**
 * Fastify's JSON parser, then the nesting limit and the reserved keys: a body deeper than
 * MAX_JSON_DEPTH, or with a key `__proto__`, `constructor` or `prototype` anywhere
 * (reservedKeyIssue), is a 400 naming it before any route sees it. The parser is given
 * `onProtoPoisoning: 'ignore'` (plain JSON.parse, which makes `__proto__` an own key and touches
 * no prototype) so that such a key is refused here with its path, where Fastify's own check
 * answered only "Body is not valid JSON".
 */
export function depthLimitedJsonParser(parse: FastifyBodyParser<string>): FastifyBodyParser<string> {
  return (req: FastifyRequest, body: string, done) => {
    req.bodyChars = body.length;
    parse(req, body, (err, value) => {
      if (err) return done(err, undefined);
      if (nestsDeeperThan(value, MAX_JSON_DEPTH)) {
        return done(
          errors.validation('request body', [
            { path: ROOT_PATH, code: 'document_too_large', message: `JSON nested more than ${MAX_JSON_DEPTH} levels deep; no erg request needs more than 5` },
          ]),
          undefined,
        );
      }
      const reserved = reservedKeyIssue(value);
      if (reserved) return done(errors.validation('request body', [reserved]), undefined);
      return done(null, value);
    });
  };
}
