// Small line charts on a canvas. drawChart: per-system frame times, one line per
// system, and the whole frame's wall time as a dashed line. Systems that do
// not conflict run at the same time, so the lines are not stacked. The
// y axis scales to nearly the largest value shown (98th percentile; taller
// points clip), with three labelled ticks; the
// canvas is sized for the device's pixel ratio so lines stay sharp.
// drawTrend (below): the world's history, one small chart per figure.
"use strict";

const CHART_COLORS = ["#4aa3ff", "#7bd88f", "#f5b461", "#e06c75", "#c792ea", "#56d4dd", "#ff9e64", "#b4be82"];

function chartColor(i) {
  return CHART_COLORS[i % CHART_COLORS.length];
}

function formatMicros(us) {
  if (us === 0) return "0";
  if (us >= 1000) return (us / 1000).toFixed(us >= 10000 ? 0 : 1) + " ms";
  return us.toFixed(us >= 100 ? 0 : 1) + " µs";
}

// data: { frames: [n], frame: [us], series: [{ name, color, values: [us] }] }
function drawChart(canvas, data) {
  const ratio = window.devicePixelRatio || 1;
  const width = canvas.clientWidth || canvas.width;
  const height = canvas.clientHeight || canvas.height;
  if (canvas.width !== Math.round(width * ratio) || canvas.height !== Math.round(height * ratio)) {
    canvas.width = Math.round(width * ratio);
    canvas.height = Math.round(height * ratio);
  }
  const ctx = canvas.getContext("2d");
  ctx.setTransform(ratio, 0, 0, ratio, 0, 0);
  ctx.clearRect(0, 0, width, height);

  const left = 56, right = 8, top = 10, bottom = 20;
  const w = width - left - right, h = height - top - bottom;
  const n = data.frames.length;
  // Scale to the 98th percentile of the frame times, so one slow frame
  // (the machine was busy) does not flatten the rest; taller points clip.
  const all = [...data.frame];
  for (const s of data.series) all.push(...s.values);
  all.sort((a, b) => a - b);
  const p98 = all.length ? all[Math.min(all.length - 1, Math.floor(all.length * 0.98))] : 0;
  const max = p98 > 0 ? p98 * 1.25 : 1;

  ctx.font = "11px system-ui, sans-serif";
  ctx.fillStyle = "#8a93a0";
  ctx.strokeStyle = "#2c323c";
  ctx.lineWidth = 1;
  ctx.textAlign = "right";
  ctx.textBaseline = "middle";
  for (let k = 0; k <= 2; k++) {
    const y = top + h - (h * k) / 2;
    ctx.beginPath();
    ctx.moveTo(left, y);
    ctx.lineTo(left + w, y);
    ctx.stroke();
    ctx.fillText(formatMicros((max * k) / 2), left - 6, y);
  }
  if (n === 0) {
    ctx.textAlign = "center";
    ctx.fillText("waiting for frames…", left + w / 2, top + h / 2);
    return;
  }
  ctx.textAlign = "left";
  ctx.textBaseline = "alphabetic";
  ctx.fillText("frame " + data.frames[0], left, height - 4);
  ctx.textAlign = "right";
  ctx.fillText("frame " + data.frames[n - 1], left + w, height - 4);

  const x = (i) => left + (n === 1 ? w : (w * i) / (n - 1));
  const y = (v) => top + h - (h * Math.min(v, max)) / max;
  const line = (values, color, dashed) => {
    ctx.beginPath();
    ctx.setLineDash(dashed ? [4, 3] : []);
    ctx.strokeStyle = color;
    ctx.lineWidth = 1.5;
    values.forEach((v, i) => (i === 0 ? ctx.moveTo(x(i), y(v)) : ctx.lineTo(x(i), y(v))));
    ctx.stroke();
  };
  line(data.frame, "#d7dce3", true);
  data.series.forEach((s) => line(s.values, s.color, false));
  ctx.setLineDash([]);
}

// A small trend chart: one or more lines over the same frames (entities,
// archetypes, bytes, frame time), the y axis from the lowest to the highest
// value shown (padded, so a flat line sits mid-height; with `clip`, to
// that quantile of the values, so one slow frame does not flatten the
// rest), three labelled ticks formatted by `format`. Returns the number of
// points drawn.
// data: { frames: [n], series: [{ name, color, values: [v], dashed }], format, clip }
function drawTrend(canvas, data) {
  const ratio = window.devicePixelRatio || 1;
  const width = canvas.clientWidth || canvas.width;
  const height = canvas.clientHeight || canvas.height;
  if (canvas.width !== Math.round(width * ratio) || canvas.height !== Math.round(height * ratio)) {
    canvas.width = Math.round(width * ratio);
    canvas.height = Math.round(height * ratio);
  }
  const ctx = canvas.getContext("2d");
  ctx.setTransform(ratio, 0, 0, ratio, 0, 0);
  ctx.clearRect(0, 0, width, height);
  const left = 64, right = 8, top = 8, bottom = 16;
  const w = width - left - right, h = height - top - bottom;
  const n = data.frames.length;
  const format = data.format || String;
  let lo = Infinity, hi = -Infinity;
  for (const s of data.series) for (const v of s.values) { lo = Math.min(lo, v); hi = Math.max(hi, v); }
  if (!Number.isFinite(lo)) { lo = 0; hi = 1; }
  if (data.clip) {
    const all = data.series.flatMap((s) => s.values).sort((a, b) => a - b);
    if (all.length) hi = Math.max(lo, all[Math.min(all.length - 1, Math.floor(all.length * data.clip))]);
  }
  const pad = hi > lo ? (hi - lo) * 0.1 : Math.max(1, Math.abs(hi) * 0.05);
  lo = Math.max(0, lo - pad);
  hi = hi + pad;
  ctx.font = "10px system-ui, sans-serif";
  ctx.fillStyle = "#8a93a0";
  ctx.strokeStyle = "#2c323c";
  ctx.lineWidth = 1;
  ctx.textAlign = "right";
  ctx.textBaseline = "middle";
  for (let k = 0; k <= 2; k++) {
    const y = top + h - (h * k) / 2;
    ctx.beginPath();
    ctx.moveTo(left, y);
    ctx.lineTo(left + w, y);
    ctx.stroke();
    ctx.fillText(format(lo + ((hi - lo) * k) / 2), left - 6, y);
  }
  if (n === 0) {
    ctx.textAlign = "center";
    ctx.fillText("waiting for frames…", left + w / 2, top + h / 2);
    return 0;
  }
  ctx.textBaseline = "alphabetic";
  ctx.textAlign = "left";
  ctx.fillText("frame " + data.frames[0], left, height - 3);
  ctx.textAlign = "right";
  ctx.fillText("frame " + data.frames[n - 1], left + w, height - 3);
  const x = (i) => left + (n === 1 ? w : (w * i) / (n - 1));
  const y = (v) => top + h - (h * (Math.min(v, hi) - lo)) / (hi - lo);
  let points = 0;
  for (const s of data.series) {
    ctx.beginPath();
    ctx.setLineDash(s.dashed ? [4, 3] : []);
    ctx.strokeStyle = s.color;
    ctx.lineWidth = 1.5;
    s.values.forEach((v, i) => (i === 0 ? ctx.moveTo(x(i), y(v)) : ctx.lineTo(x(i), y(v))));
    ctx.stroke();
    points += s.values.length;
  }
  ctx.setLineDash([]);
  return points;
}
