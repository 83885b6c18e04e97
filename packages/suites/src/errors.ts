/** Why a suite could not be triggered; the API maps the code to a status. */
export type SuiteErrorCode = 'ERG_SUITE_UNKNOWN_CLUSTER' | 'ERG_SUITE_TEMPLATE_INVALID' | 'ERG_SUITE_BASELINE_MISSING';

export class SuiteError extends Error {
  constructor(
    readonly code: SuiteErrorCode,
    message: string,
    readonly details: Record<string, unknown> = {},
  ) {
    super(message);
    this.name = 'SuiteError';
  }
}
