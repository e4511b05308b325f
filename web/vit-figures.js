// The Vision Transformer section's pictures: the 8x8 input in grey, the input tinted by the
// CLS token's attention over its patches, and the captioned panels they sit in. Canvases are
// sized in CSS pixels and drawn at s device pixels per CSS pixel.

const TINT = [192, 57, 43];  // the page's accent colour: the attention tint

// A canvas of css x css CSS pixels whose drawing units are the 8x8 pixels of the input.
function sizeCanvas(c, css, s) {
  c.style.width = c.style.height = `${css}px`;
  c.width = c.height = Math.round(css * s);
  const ctx = c.getContext('2d');
  ctx.setTransform(c.width / 8, 0, 0, c.height / 8, 0, 0);  // 8x8 user units
  ctx.imageSmoothingEnabled = false;
  return ctx;
}

// ink: the grey of a 16 (255: black); the overlays draw the ink lighter so that the tint shows.
export function paintInput(ctx, input, ink = 255) {
  for (let i = 0; i < 64; ++i) {
    const g = input ? Math.round(255 - (input[i] / 16) * ink) : 255;
    ctx.fillStyle = `rgb(${g},${g},${g})`;
    ctx.fillRect(i % 8, Math.floor(i / 8), 1.02, 1.02);
  }
}

// The 8x8 input in grey (ink dark, as drawn), 96 CSS pixels wide.
export function drawInput(c, input, s) {
  const ctx = sizeCanvas(c, 96, s);
  paintInput(ctx, input);
  ctx.strokeStyle = 'rgba(0,0,0,0.12)';
  ctx.lineWidth = 1 / (c.width / 8);
  for (let i = 1; i < 8; ++i) {
    ctx.beginPath();
    ctx.moveTo(i, 0); ctx.lineTo(i, 8);
    ctx.moveTo(0, i); ctx.lineTo(8, i);
    ctx.stroke();
  }
}

// One overlay: the input, each patch tinted by the CLS token's weight on it (w / max of the
// panel: the strongest patch at full tint), and the patch grid.
export function drawOverlay(c, css, weights, input, s) {
  const ctx = sizeCanvas(c, css, s);
  paintInput(ctx, input, 170);
  const P = weights.length, g = Math.round(Math.sqrt(P)), cell = 8 / g;
  const max = Math.max(...weights);
  for (let i = 0; i < P; ++i) {
    const a = max > 0 ? (0.8 * weights[i]) / max : 0;
    ctx.fillStyle = `rgba(${TINT[0]},${TINT[1]},${TINT[2]},${a.toFixed(3)})`;
    ctx.fillRect((i % g) * cell, Math.floor(i / g) * cell, cell, cell);
  }
  ctx.strokeStyle = 'rgba(29,35,48,0.45)';
  ctx.lineWidth = 1 / (c.width / 8);
  for (let i = 0; i <= g; ++i) {
    ctx.beginPath();
    ctx.moveTo(i * cell, 0); ctx.lineTo(i * cell, 8);
    ctx.moveTo(0, i * cell); ctx.lineTo(8, i * cell);
    ctx.stroke();
  }
}

export function panel(fig, title, sub) {
  const f = document.createElement('figure');
  const c = document.createElement('canvas');
  const cap = document.createElement('figcaption');
  cap.innerHTML = `<b></b><span class="muted"></span>`;
  cap.querySelector('b').textContent = title;
  cap.querySelector('span').textContent = sub;
  f.append(c, cap);
  fig.append(f);
  return c;
}

export function maxInfo(w) {
  let k = 0;
  for (let i = 1; i < w.length; ++i) if (w[i] > w[k]) k = i;
  const g = Math.round(Math.sqrt(w.length));
  return `max ${w[k].toFixed(2)} at patch (${Math.floor(k / g) + 1}, ${(k % g) + 1})`;
}
