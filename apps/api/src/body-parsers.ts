import type { FastifyInstance } from 'fastify';
import { depthLimitedJsonParser } from './validation';

/** How request bodies are read before validation: JSON with a depth limit, YAML as plain text. */
export function installBodyParsers(app: FastifyInstance): void {
  // JSON bodies deeper than any erg request needs, or with a reserved key (`__proto__`,
  // `constructor`, `prototype`), are a 400 naming the path before any route sees them
  // (validation.ts); so the parser itself only parses.
  const defaultJsonParser = app.getDefaultJsonParser('ignore', 'ignore');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, depthLimitedJsonParser(defaultJsonParser));
  // YAML campaign specs arrive as text and are parsed (with line numbers in errors) by the route.
  app.addContentTypeParser(['application/yaml', 'application/x-yaml', 'text/yaml'], { parseAs: 'string' }, (_req, body, done) =>
    done(null, body),
  );
}
