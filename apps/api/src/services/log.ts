/**
 * What a service logs to: the request's logger (its lines carry the request id), as far as the
 * services use it. A pino logger is one; a service never needs the request itself.
 */
export interface Log {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}
