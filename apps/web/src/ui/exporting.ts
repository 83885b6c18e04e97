// Downloads: CSV text, an <svg> element as SVG or PNG (drawn onto a canvas), a canvas as PNG.

export function downloadBlob(blob: Blob, filename: string): void {
  const url = URL.createObjectURL(blob);
  const a = document.createElement('a');
  a.href = url;
  a.download = filename;
  document.body.appendChild(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

export function downloadText(text: string, filename: string, type: string): void {
  downloadBlob(new Blob([text], { type }), filename);
}

export function downloadCsv(csv: string, filename: string): void {
  downloadText(csv, filename, 'text/csv;charset=utf-8');
}

/** The element as a standalone SVG document (namespace and size set). */
export function svgText(svg: SVGSVGElement): string {
  const clone = svg.cloneNode(true) as SVGSVGElement;
  clone.setAttribute('xmlns', 'http://www.w3.org/2000/svg');
  const { width, height } = svg.viewBox.baseVal;
  if (width && height) {
    clone.setAttribute('width', String(width));
    clone.setAttribute('height', String(height));
  }
  return new XMLSerializer().serializeToString(clone);
}

/** Renders SVG text onto a canvas at `scale` and resolves to a PNG blob. */
export async function svgTextToPng(text: string, width: number, height: number, scale = 2): Promise<Blob> {
  const img = new Image();
  const url = URL.createObjectURL(new Blob([text], { type: 'image/svg+xml' }));
  try {
    await new Promise<void>((resolve, reject) => {
      img.onload = () => resolve();
      img.onerror = () => reject(new Error('the SVG could not be drawn'));
      img.src = url;
    });
    const canvas = document.createElement('canvas');
    canvas.width = Math.round(width * scale);
    canvas.height = Math.round(height * scale);
    const ctx = canvas.getContext('2d')!;
    ctx.fillStyle = 'white';
    ctx.fillRect(0, 0, canvas.width, canvas.height);
    ctx.drawImage(img, 0, 0, canvas.width, canvas.height);
    return await canvasPng(canvas);
  } finally {
    URL.revokeObjectURL(url);
  }
}

export function canvasPng(canvas: HTMLCanvasElement): Promise<Blob> {
  return new Promise((resolve, reject) => canvas.toBlob((b) => (b ? resolve(b) : reject(new Error('PNG export failed'))), 'image/png'));
}

export async function downloadSvgElement(svg: SVGSVGElement, basename: string, format: 'svg' | 'png'): Promise<void> {
  const text = svgText(svg);
  if (format === 'svg') return downloadText(text, `${basename}.svg`, 'image/svg+xml');
  const { width, height } = svg.viewBox.baseVal;
  downloadBlob(await svgTextToPng(text, width || svg.clientWidth, height || svg.clientHeight), `${basename}.png`);
}
