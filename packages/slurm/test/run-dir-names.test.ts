import { RUN_DIR_FILES as SPEC_RUN_DIR_FILES } from '@erg/spec';
import { InvalidRenderInputError, RUN_DIR_FILES, renderRunFiles } from '../src';
import { renderInput, spec } from './helpers';

describe('the renderer and the spec share one list of run-directory names', () => {
  test('RUN_DIR_FILES is the spec\'s', () => {
    expect(RUN_DIR_FILES).toBe(SPEC_RUN_DIR_FILES);
  });

  test('a files entry named like the telemetry folder is refused by the renderer too', () => {
    // The spec refuses it first; a spec that escaped it (stored before the rule) must still not render.
    const s = spec();
    const input = renderInput({ spec: { ...s, files: { telemetry: 'x' } } });
    expect(() => renderRunFiles(input)).toThrow(InvalidRenderInputError);
    expect(() => renderRunFiles(input)).toThrow(/files\.telemetry/);
  });
});
