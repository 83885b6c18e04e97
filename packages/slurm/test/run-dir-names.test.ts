import { RUN_DIR_FILES, TIMED_WORKLOAD_LINES } from '@erg/spec';
import { InvalidRenderInputError, renderJobScript, renderRunFiles } from '../src';
import { renderInput, spec } from './helpers';

describe('the renderer writes the run directory by its owner\'s names and lines (@erg/spec run-dir)', () => {
  test('job.sh and run.sh are staged under the owner\'s names, and job.sh runs the workload with its lines', () => {
    const input = renderInput();
    expect(renderRunFiles(input).map((f) => f.name)).toEqual([RUN_DIR_FILES.jobScript, RUN_DIR_FILES.runScript]);
    expect(renderJobScript(input)).toContain(`\n${TIMED_WORKLOAD_LINES.join('\n')}\n`);
  });

  test('a files entry named like the telemetry folder is refused by the renderer too', () => {
    // The spec refuses it first; a spec that escaped it (stored before the rule) must still not render.
    const s = spec();
    const input = renderInput({ spec: { ...s, files: { telemetry: 'x' } } });
    expect(() => renderRunFiles(input)).toThrow(InvalidRenderInputError);
    expect(() => renderRunFiles(input)).toThrow(/files\.telemetry/);
  });
});
