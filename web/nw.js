// The Nadaraya-Watson section of the page (d2l 10.2): kernel regression of 50 noisy samples
// of f(x) = 2 sin(x) + x^0.8, the prediction plotted against the truth and the attention
// weights of every test input over the training inputs, for the kernel width of the slider.
import { $, scale, putImage } from './ui.js';

function mulberry32(seed) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const nw = (() => {
  const rand = mulberry32(2021);
  const normal = () => Math.sqrt(-2 * Math.log(1 - rand())) * Math.cos(2 * Math.PI * rand());
  const f = (x) => 2 * Math.sin(x) + x ** 0.8;
  const n = 50;
  const xTrain = Array.from({ length: n }, () => rand() * 5).sort((a, b) => a - b);
  const yTrain = xTrain.map((x) => f(x) + 0.5 * normal());
  const xTest = Array.from({ length: n }, (_, i) => i * 0.1);
  const yTruth = xTest.map(f);
  return { xTrain, yTrain, xTest, yTruth };
})();

// Draws the plot and the heatmap (colormap cmap) with the module al; onError gets a message.
export function drawNW(al, cmap, onError) {
  const w = Math.exp(Number($('nw-width').value));
  $('nw-value').textContent = w.toFixed(2);
  const s = scale();
  try {
    const { y, weights } = al.nadarayaWatson(nw.xTest, nw.xTrain, nw.yTrain, w);
    const mse = y.reduce((a, v, i) => a + (v - nw.yTruth[i]) ** 2, 0) / y.length;
    $('nw-loss').textContent = `mean squared error against the truth: ${mse.toFixed(3)}`;
    const plot = al.renderPlot([
      { x: nw.xTest, y: nw.yTruth, label: 'Truth' },
      { x: nw.xTest, y: Array.from(y), label: 'Pred', style: 'dashed' },
      { x: nw.xTrain, y: nw.yTrain, label: '', style: 'points', color: [255, 127, 14] },
    ], { xlabel: 'x', ylabel: 'y', xlim: [0, 5], ylim: [-1, 5], width: 4.6, height: 3.2, dpi: 100 * s });
    putImage($('nw-plot'), plot, s);
    const hm = al.renderHeatmap(weights, {
      queries: nw.xTest.length, keys: nw.xTrain.length, cmap,
      xlabel: 'Sorted training inputs', ylabel: 'Sorted testing inputs', width: 3.8, height: 3.2, dpi: 100 * s,
    });
    putImage($('nw-heatmap'), hm, s);
    $('nw-error').hidden = true;
  } catch (e) {
    onError(`Nadaraya–Watson: ${e.message}`);
  }
}
