// The drawing pad of the Vision Transformer section: a digit drawn with a mouse, pen or finger.
//
// The canvas has a fixed size in pixels whatever its size on screen, so that a drawing
// reaches the preprocessing the same way on every screen. The brush is round, 1/9 of the side:
// a digit drawn 3/4 of the pad high then has strokes about 5 px wide in the dataset's 32x32
// frame and about as much ink as the dataset's digits (some 310 of the 64 x 16); thinner
// brushes make a plain vertical stroke read as a 7, since the dataset's ones are thick.
export const PAD = 256, BRUSH = PAD / 9;

export class DrawPad {
  // onStroke(): a stroke begins (before its first dot); onChange(): the drawing changed.
  constructor(canvas, { onStroke, onChange }) {
    this.canvas = canvas;
    const ctx = canvas.getContext('2d', { willReadFrequently: true });
    this.ctx = ctx;
    ctx.lineWidth = BRUSH;
    ctx.lineCap = 'round';
    ctx.lineJoin = 'round';
    ctx.strokeStyle = ctx.fillStyle = '#000';
    this.clear();
    let last = null, id = null;
    canvas.addEventListener('pointerdown', (e) => {
      if (e.button !== 0 && e.pointerType === 'mouse') return;
      e.preventDefault();
      onStroke();
      id = e.pointerId;
      canvas.setPointerCapture?.(id);
      last = this.point(e);
      ctx.fillStyle = '#000';
      this.dot(last);
      onChange();
    });
    canvas.addEventListener('pointermove', (e) => {
      if (id !== e.pointerId || !last) return;
      e.preventDefault();
      // every point the browser coalesced into this event: smooth strokes with fast pens
      const events = e.getCoalescedEvents?.().length ? e.getCoalescedEvents() : [e];
      for (const ev of events) {
        const p = this.point(ev);
        this.segment(last, p);
        last = p;
      }
      onChange();
    });
    const end = (e) => {
      if (id !== e.pointerId) return;
      id = null;
      last = null;
      onChange();
    };
    canvas.addEventListener('pointerup', end);
    canvas.addEventListener('pointercancel', end);
  }

  clear() {
    this.ctx.fillStyle = '#fff';
    this.ctx.fillRect(0, 0, PAD, PAD);
  }

  // The pad's pixels (RGBA), as the preprocessing takes them.
  pixels() {
    return this.ctx.getImageData(0, 0, PAD, PAD);
  }

  // An 8x8 image (values 0..16, row-major) as blocks (grey = 1 - v/16, as the fixtures' PNGs):
  // it spans the pad's 8 rows, so the digits preprocessing keeps its placement and values.
  paint8x8(values) {
    const ctx = this.ctx, cell = PAD / 8;
    this.clear();
    for (let i = 0; i < 64; ++i) {
      const g = 255 - Math.floor((values[i] * 255 + 8) / 16);
      ctx.fillStyle = `rgb(${g},${g},${g})`;
      ctx.fillRect((i % 8) * cell, Math.floor(i / 8) * cell, cell, cell);
    }
    ctx.fillStyle = '#000';
  }

  point(e) {
    const r = this.canvas.getBoundingClientRect();
    return [((e.clientX - r.left) / r.width) * PAD, ((e.clientY - r.top) / r.height) * PAD];
  }

  dot([x, y]) {
    this.ctx.beginPath();
    this.ctx.arc(x, y, BRUSH / 2, 0, 2 * Math.PI);
    this.ctx.fill();
  }

  segment([x0, y0], [x1, y1]) {
    this.ctx.beginPath();
    this.ctx.moveTo(x0, y0);
    this.ctx.lineTo(x1, y1);
    this.ctx.stroke();
  }
}
