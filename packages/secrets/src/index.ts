// @erg/secrets — secrets at rest and in text: AES-256-GCM sealing of stored credentials, key loading and rotation, redaction.
export { SecretBox, SecretError, isSealed, keyId, SEALED_PREFIX, KEY_BYTES, type SecretErrorCode } from './secret-box';
export { secretBoxFrom, MAKE_KEY_HINT, type SecretKeySource } from './keys';
export { redactSecrets, LOG_REDACTION, REDACTED } from './redact';
export { StreamingRedactor } from './streaming-redactor';
