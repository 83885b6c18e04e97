// @erg/evidence — a campaign's evidence bundle: its layout (every name in it, one owner), the
// writer (a stream, run after run, from an EvidenceSource the API reads from the database), the
// reader, and `erg verify`, which recomputes every figure from the bundle alone. The CLI imports
// the subpaths @erg/evidence/layout and @erg/evidence/verify, which load no Parquet writer.
export * from './layout';
export { stringifyExact, parseExact } from './exact-json';
export { numberText, parseNumber, parseSamplesCsv, samplesCsv, marksCsv, type SampleColumn, type MarkRow } from './samples-csv';
export { SamplesParquet, PARQUET_ROW_GROUP_ROWS } from './samples-parquet';
export { bundleStream, type EvidenceSource, type BundleOptions } from './bundle-writer';
export { BundleFileError, BundleUnreadableError, EvidenceBundle, openEvidenceBundle, readBundleMembers, type BundleMember, type BundleMembers } from './bundle-reader';
export { verifyBundle, campaignInputsWith, diffJson, MAX_DIFFERENCES_PER_FILE, type Difference, type VerifyReport } from './verify';
