// @erg/cli — the `erg` command. main.ts runs it on the real process; everything here is exported
// so that tests (and the lead's `erg regress`) can use the pieces.
export { buildProgram, runCli, reportError } from './program';
export { withExamples, jsonOption, type Act, type Action } from './commands/register';
export { CommandContext, processRuntime, createApi, REQUEST_TIMEOUT_MS, type Api, type CliRuntime, type GlobalOptions, type Output } from './context';
export { CliError, EXIT, type ExitCode, fromApiFailure, usageError, withFlagNames } from './errors';
export {
  CliEnv, ConfigFile, QUICKSTART_API_URL, parseCliEnv, configFilePath, findQuickstartToken, readConfigFile, resolveConfig,
  requireApi, maskToken, writeConfigFile, checkApiUrl, type ResolvedConfig, type Setting, type SettingSource,
} from './config';
export * from '@erg/format';
export { colors, colorEnabled, stripAnsi, displayWidth, type Colors } from './output/color';
export { renderTable, renderFields, pad, type Column } from './output/table';
export { renderCsv, csvField } from '@erg/format';
export { mdCell, mdCode, renderMarkdownTable } from './output/markdown';
export { ResultsSort, sortResults, type CampaignResults, type ConfigurationResult, type Summary } from './results/model';
export { humanResults } from './results/human';
export { studyAnswer, studyAnswerLines, type StudyAnswer } from './results/answer';
export { excludedLines, ResultsFormat, renderResults, resultsTable, resultsMarkdown, resultsCsv, resultsJson } from './results/render';
export { junitReport } from './report/junit';
export { markdownReport } from './report/markdown';
export { orderedVerdicts, STATUS_SYMBOL, type ReportInput, type CampaignVerdict, type MetricVerdict, type VerdictEntry } from './report/verdict-text';
export { xmlAttr, xmlText } from './report/xml';
export { EtaEstimator, progressText, progressBar, doneRuns, isFinal, countsText, strategyText, type Progress } from './watch/progress';
export { newOutput } from './commands/logs';
export { waitingReasons } from './commands/status';
export { clusterBody, ClusterFile, powerHelperText, slurmVersionText } from './commands/clusters';
export { specFormat, DEFAULT_MAX_RUNS } from './commands/validate';
export { watchCampaign, DEFAULT_INTERVAL_S } from './commands/watch';
export { runReport, paintRunState, type RunEnergyAnswer, type RunReportOptions } from './run/render';
export { ResultsGrouping, printResults, type ResultsOptions } from './commands/results';
export {
  phasesReport, phasesHeader, phaseRows, stepRows, marksText, noPhasesText, howToMarkText, PHASE_MARKERS, type RunPhasesAnswer,
} from './phases/render';
export {
  renderPhaseResults, phaseResultsTable, phaseResultsMarkdown, phaseResultsCsv, phaseResultRows, comparisonSentence, comparisonRows, orderedPhases,
  noCampaignPhasesText, PHASE_CSV_COLUMNS, PHASE_LEGEND, COMPARISON_PHASES_SHOWN, type PhaseResultsOutput,
} from './results/by-phase';
export type { Run, RunEnergy, RunPhasesView, RunPhases, CampaignPhases, ConfigurationPhases, PhaseComparison } from './api-types';
export {
  renderDataMovement, dataMovementTable, dataMovementMarkdown, dataMovementCsv, movementRows, phaseMovementTable, orderedDataMovement,
  noDataMovementText, MOVEMENT_CSV_COLUMNS, MOVEMENT_LEGEND,
} from './results/data-movement';
export type { CampaignDataMovement, ConfigurationDataMovement } from './api-types';
export { decisionsReport } from './decisions/render';
export type { CampaignDecisions } from './api-types';
export { reportHtml, type ReportInput as StudyReportInput } from './study-report/html';
export { marginalMeans, nRange, paretoFigure, phasesFigure, movementFigure, effectsFigure, type Figure } from './study-report/figures';
export { findChromium, printPdf } from './study-report/pdf';
export { ReportFormat } from './commands/report';
