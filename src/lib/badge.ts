// A shields-style stock badge. Width is estimated from the text (about 6.5 px a character at 11 px Verdana), so no
// font metrics are needed at the edge.

const escapeXml = (value: string) =>
  value.replace(/[&<>"']/g, (ch) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' })[ch]!);

const textWidth = (text: string) => Math.ceil(text.length * 6.5) + 12;

export function stockBadgeSvg(stockCount: number): string {
  const label = stockCount > 0 ? 'in stock' : 'stock';
  const value = stockCount > 0 ? stockCount.toLocaleString('en-US') : 'out of stock';
  const color = stockCount > 0 ? '#2e7d32' : '#c62828';
  const title = stockCount > 0 ? `in stock: ${value}` : 'out of stock';
  const left = textWidth(label);
  const right = textWidth(value);
  const width = left + right;
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="20" viewBox="0 0 ${width} 20" role="img" aria-label="${escapeXml(title)}">
<title>${escapeXml(title)}</title>
<rect width="${left}" height="20" rx="3" fill="#555"/>
<rect x="${left}" width="${right}" height="20" rx="3" fill="${color}"/>
<rect x="${left}" width="4" height="20" fill="${color}"/>
<g fill="#fff" font-family="Verdana,DejaVu Sans,sans-serif" font-size="11" text-anchor="middle" aria-hidden="true">
<text x="${left / 2}" y="14">${escapeXml(label)}</text>
<text x="${left + right / 2}" y="14">${escapeXml(value)}</text>
</g>
</svg>
`;
}
