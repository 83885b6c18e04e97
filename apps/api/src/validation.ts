import type { FastifySchemaCompiler } from 'fastify';
import type { ZodType } from 'zod';
import { humanErrorMap, issuesFromZodError } from '@erg/spec';
import { errors } from './errors';

/** Validates a request part with its zod schema; failures carry our issue format (path + message). */
export const validatorCompiler: FastifySchemaCompiler<ZodType> =
  ({ schema, httpPart }) =>
  (data) => {
    const result = schema.safeParse(data, { error: humanErrorMap });
    if (result.success) return { value: result.data };
    return { error: errors.validation(httpPart === 'body' ? 'request body' : `request ${httpPart}`, issuesFromZodError(result.error)) };
  };

