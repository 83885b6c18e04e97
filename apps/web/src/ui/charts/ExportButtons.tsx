import type { RefObject } from 'react';
import { downloadSvgElement } from '../exporting';

/** "PNG" and "SVG" buttons for an <svg> chart. */
export function SvgExport({ target, name, label }: { target: RefObject<SVGSVGElement | null>; name: string; label: string }) {
  const go = (format: 'svg' | 'png') => { if (target.current) void downloadSvgElement(target.current, name, format); };
  return (
    <span className="exports">
      <button type="button" onClick={() => go('png')} aria-label={`Export ${label} as PNG`}>PNG</button>
      <button type="button" onClick={() => go('svg')} aria-label={`Export ${label} as SVG`}>SVG</button>
    </span>
  );
}
