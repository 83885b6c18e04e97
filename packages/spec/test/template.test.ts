import { renderTemplate, scanTemplate, TemplateError, templatePlaceholders } from '../src';

describe('templatePlaceholders', () => {
  it('finds each name once, in order of first use, with or without spaces inside the braces', () => {
    expect(templatePlaceholders('srun a --sp {{sp}} --mb {{ micro_batch }} {{\tsp\t}} {{run_id}}')).toEqual(['sp', 'micro_batch', 'run_id']);
  });

  it('returns nothing for text without placeholders, including JSON braces', () => {
    expect(templatePlaceholders('{ "a": { "b": 1 } }')).toEqual([]);
    expect(templatePlaceholders('}} alone')).toEqual([]);
    expect(templatePlaceholders('')).toEqual([]);
  });

  it('treats the last two braces of a run as the opener', () => {
    expect(templatePlaceholders('{"device": {{{x}}}}')).toEqual(['x']);
  });

  it('throws a TemplateError on an unclosed placeholder', () => {
    expect(() => templatePlaceholders('a\nb {{sp')).toThrow(TemplateError);
    expect(() => templatePlaceholders('a\nb {{sp')).toThrow('unclosed "{{" at line 2, column 3');
  });

  it('throws on braces around something that is not a name', () => {
    for (const bad of ['{{}}', '{{ a b }}', '{{1x}}', '{{a-b}}', '{{ a\n}}', '{{$x}}']) {
      expect(() => templatePlaceholders(bad)).toThrow(/is not a placeholder/);
    }
  });
});

describe('scanTemplate', () => {
  it('splits text into literals and placeholders with positions', () => {
    const { segments, problems } = scanTemplate('x {{a}}\n{{ b }}y');
    expect(problems).toEqual([]);
    expect(segments).toEqual([
      'x ',
      { name: 'a', index: 2, line: 1, column: 3 },
      '\n',
      { name: 'b', index: 8, line: 2, column: 1 },
      'y',
    ]);
  });

  it('collects every problem rather than stopping at the first', () => {
    const { problems } = scanTemplate('{{ a b }} then {{ok}} then {{ c d }} and {{open');
    expect(problems.map((p) => p.message)).toEqual([
      '"{{ a b }}" at line 1, column 1 is not a placeholder; write {{name}} with a parameter name',
      '"{{ c d }}" at line 1, column 28 is not a placeholder; write {{name}} with a parameter name',
      'unclosed "{{" at line 1, column 42; write placeholders as {{name}}',
    ]);
  });
});

describe('renderTemplate', () => {
  it('substitutes the canonical string of each value', () => {
    expect(renderTemplate('--sp {{sp}} --lr {{ lr }} --cpu {{cpu}} --mode {{mode}} {{sp}}', { sp: 4, lr: 0.5, cpu: true, mode: 'fast' })).toBe(
      '--sp 4 --lr 0.5 --cpu true --mode fast 4',
    );
  });

  it('leaves text without placeholders unchanged', () => {
    const text = '#!/bin/bash\necho "${HOME}" { } }}\n';
    expect(renderTemplate(text, {})).toBe(text);
  });

  it('keeps the outer braces of {{{x}}}', () => {
    expect(renderTemplate('{{{x}}}', { x: 1 })).toBe('{1}');
  });

  it('throws on a placeholder without a value, naming it', () => {
    expect(() => renderTemplate('a {{missing}}', { other: 1 })).toThrow('template uses {{missing}} at line 1, which has no value');
  });

  it('does not take values from the prototype chain', () => {
    expect(() => renderTemplate('{{toString}}', {})).toThrow(TemplateError);
  });

  it('throws on syntax problems', () => {
    expect(() => renderTemplate('{{x', { x: 1 })).toThrow(/unclosed/);
  });

  it('refuses an unsafe value even though validation should have caught it', () => {
    expect(() => renderTemplate('echo {{x}}', { x: '$(id)' })).toThrow(/not a safe parameter value/);
  });
});
