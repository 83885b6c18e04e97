/**
 * An Ajv (JSON Schema 2020-12) validator for schemas taken out of the API's OpenAPI document:
 * independent of zod, so "the response matches its documented schema" is checked by something
 * other than the code that produced it.
 */
import Ajv2020, { type ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import type { JsonSchema } from './openapi-arbitrary';

export interface OpenApiValidator {
  /** A validator for `schema`, whose `#/components/schemas/…` refs point into the document. */
  compile(schema: JsonSchema): ValidateFunction;
  errorsText(fn: ValidateFunction): string;
}

export function openApiValidator(document: JsonSchema): OpenApiValidator {
  // strict: false — OpenAPI adds keywords (e.g. `example`, `id`) that are not JSON Schema's.
  const ajv = new Ajv2020({ strict: false, allErrors: false, validateFormats: true });
  addFormats(ajv);
  const components = document['components'];
  const cache = new Map<string, ValidateFunction>();
  return {
    compile(schema) {
      const key = JSON.stringify(schema);
      let fn = cache.get(key);
      if (!fn) {
        // Refs are relative to the root: carry the components along with each schema.
        fn = ajv.compile({ ...schema, components });
        cache.set(key, fn);
      }
      return fn;
    },
    errorsText(fn) {
      return ajv.errorsText(fn.errors, { separator: '; ' });
    },
  };
}
