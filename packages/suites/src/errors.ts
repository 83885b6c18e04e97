import { ErgError } from '@erg/spec';

/** Why a suite could not be triggered; the catalog (packages/spec/src/errors.ts) gives the API's status. */
export type SuiteErrorCode = 'ERG_SUITE_UNKNOWN_CLUSTER' | 'ERG_SUITE_TEMPLATE_INVALID' | 'ERG_SUITE_BASELINE_MISSING' | 'ERG_DEACTIVATED';

export class SuiteError extends ErgError<SuiteErrorCode> {
  constructor(
    code: SuiteErrorCode,
    message: string,
    readonly details: Record<string, unknown> = {},
  ) {
    super(code, message);
  }
}
