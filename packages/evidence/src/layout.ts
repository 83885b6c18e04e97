import { z } from 'zod';

/**
 * The evidence bundle's layout: every name in it, its manifest's schema and its README. The one
 * owner of these names (as @erg/spec run-dir.ts is of a run's directory): the writer, the reader,
 * `erg verify` and erg.py's open_bundle spell them only through here (erg.py keeps its own copy,
 * checked against this one by a test).
 *
 * A bundle is one uncompressed tar archive (POSIX pax, readable by any tar and by Python's
 * tarfile); the members that can be large are compressed each on their own (samples and marks:
 * CSV.gz, the samples once more as Parquet), so that a notebook reads any member without
 * unpacking the rest.
 */

/** What a bundle says it is (manifest.json `format`): a reader refuses a format it does not know. */
export const BUNDLE_FORMAT = 'erg-evidence/1';

/** The names at the bundle's top level. */
export const BUNDLE_FILES = {
  /** What each file is, in words (README_TEXT). */
  readme: 'README.txt',
  /** The campaign as GET /v1/campaigns/:id shows it, without its spec. */
  campaign: 'campaign.json',
  /** The spec as the user submitted it (YAML or JSON text); absent for a campaign created before erg kept it. */
  specSubmitted: 'spec-submitted.txt',
  /** The spec as erg stored it: validated, with every default applied (what every run was rendered from). */
  specStored: 'spec.json',
  /** Everything the campaign's results are computed from (CampaignFigureInputs), as read (exact JSON). */
  campaignInputs: 'campaign-inputs.json',
  /** The campaign's results, as GET /v1/campaigns/:id/results shows them (defaults: per configuration, time and energy). */
  results: 'results.json',
  /** Every sample of every run, one row each: run, node, sensor, t, v. */
  samplesParquet: 'samples.parquet',
  /** Every other file's sha256 and size; written last. */
  manifest: 'manifest.json',
} as const;

/** The names in a run's folder, runs/<run id>/. */
export const RUN_FILES = {
  /** The run as GET /v1/runs/:id shows it, with its position in the run order and its state changes. */
  run: 'run.json',
  /**
   * Everything its figures are computed from (@erg/results RunFigureInputs) but the samples, as exact JSON — what is not the
   * run's own (neighbouring jobs, the cluster's settings and carbon intensity) as stored with its figures; absent for a run without a workload window.
   */
  inputs: 'inputs.json',
  /** Its stored figures, as GET /v1/runs/:id/energy shows them; absent for a run without figures. */
  energy: 'energy.json',
  /** Its phase marks, one per line: node, offset, kind, name, t, clock, writer. */
  marks: 'marks.csv.gz',
  /** Its samples, one file per node (samplesFile). */
  samplesDir: 'samples',
} as const;

/** The folder of every run's files. */
export const RUNS_DIR = 'runs';

/** The header of every samples file: sensor, time (Unix ms) and value (in the sensor's unit). */
export const SAMPLES_COLUMNS = ['sensor', 't', 'v'] as const;
/** The header of a run's marks file. */
export const MARKS_COLUMNS = ['node', 'offset', 'kind', 'name', 't', 'clock', 'writer'] as const;
/** The columns of samples.parquet. */
export const PARQUET_COLUMNS = ['run', 'node', 'sensor', 't', 'v'] as const;

export type RunFile = Exclude<keyof typeof RUN_FILES, 'samplesDir'>;

/** The path of one of a run's files. */
export function runFile(runId: string, file: RunFile): string {
  return `${RUNS_DIR}/${runId}/${RUN_FILES[file]}`;
}

/** The path of a run's samples of one node (node names are host names: letters, digits and . _ -). */
export function samplesFile(runId: string, node: string): string {
  return `${RUNS_DIR}/${runId}/${RUN_FILES.samplesDir}/${node}.csv.gz`;
}

/** The file name a bundle is offered under (Content-Disposition) and `erg export` writes by default. */
export function bundleFileName(campaignId: string): string {
  return `erg-evidence-${campaignId}.tar`;
}

/** One file of the bundle as the manifest lists it. */
export const ManifestFile = z.object({ path: z.string(), sha256: z.string().regex(/^[0-9a-f]{64}$/), bytes: z.int().min(0) });
export type ManifestFile = z.infer<typeof ManifestFile>;

export const Manifest = z.object({
  format: z.literal(BUNDLE_FORMAT),
  /** The version of the erg that wrote it. */
  ergVersion: z.string(),
  campaignId: z.string(),
  /** When it was written (ISO 8601). */
  createdAt: z.string(),
  /** The runs in it, in the campaign's run order (position). */
  runs: z.array(z.string()),
  /** Every file but the manifest, in the order written. */
  files: z.array(ManifestFile),
});
export type Manifest = z.infer<typeof Manifest>;

/** README.txt: what each file is, for a person who opens the archive. */
export function readmeText(campaignId: string, ergVersion: string): string {
  return `erg evidence bundle (${BUNDLE_FORMAT}) of campaign ${campaignId}, written by erg ${ergVersion}.

Check it, offline:           erg verify ${bundleFileName(campaignId)}
Read it in Python (pandas):  import erg; b = erg.open_bundle("${bundleFileName(campaignId)}")

${BUNDLE_FILES.manifest}        every other file's sha256 and size, the runs, erg's version; written last
${BUNDLE_FILES.campaign}        the campaign (name, state, cluster, run counts, created)
${BUNDLE_FILES.specSubmitted}   the spec as submitted (YAML or JSON), where erg kept it
${BUNDLE_FILES.specStored}            the spec as stored: validated, defaults applied
${BUNDLE_FILES.campaignInputs}  everything the results are computed from, as read (exact JSON)
${BUNDLE_FILES.results}         the results, as GET /v1/campaigns/<id>/results shows them
${BUNDLE_FILES.samplesParquet}      every sample of every run: run, node, sensor, t (Unix ms), v
${RUNS_DIR}/<run>/${RUN_FILES.run}       the run: state, its changes (events), configuration, repetition,
                        position in the run order, Slurm job, node list, fingerprints, power records
${RUNS_DIR}/<run>/${RUN_FILES.inputs}    everything its figures are computed from but the samples (exact JSON)
${RUNS_DIR}/<run>/${RUN_FILES.energy}    its stored figures, as GET /v1/runs/<run>/energy shows them (phases included)
${RUNS_DIR}/<run>/${RUN_FILES.marks}   its phase marks: ${MARKS_COLUMNS.join(',')}
${RUNS_DIR}/<run>/${RUN_FILES.samplesDir}/<node>.csv.gz   its samples on that node: ${SAMPLES_COLUMNS.join(',')}

Numbers are written so that they parse back to the same doubles (the shortest round-trip form;
pandas: float_precision="round_trip"). Exact JSON is JSON where a value JSON cannot hold is an
object {"$erg": kind, "v": ...}: a Map (its entries), a bigint, a Date, -0, NaN or ±Infinity.
`;
}
