/* app.js — the dashboard's pages: sessions, a session's tuning curves, a
 * task's configs and knobs, and the benchmarks, drawn with Chart.js. The
 * same file runs on the server's page (answers fetched from /api/...) and
 * inside the static report (answers read from the JSON object embedded in
 * the page, keyed by API path). Routes live in the URL's fragment
 * (#/session/ID), so that they work from a file too.
 *
 * Every string from the database (model and host names, commands, configs,
 * error messages: shared logs are written by other people) enters the
 * document through el() below as a text node or an attribute value, never
 * as markup; charts draw their labels on the canvas. */
'use strict';
(function () {
  const dataEl = document.getElementById('rt-data');
  const DATA = dataEl ? JSON.parse(dataEl.textContent) : null;
  const app = document.getElementById('app');
  const statusEl = document.getElementById('status');
  const POLL_MS = 3000;
  const COLORS = ['#2f6fde', '#e8710a', '#1e8e3e', '#9334e6', '#d01884', '#12b5cb', '#f9ab00', '#5f6368'];
  const BAD = '#c0392b';
  let charts = [];
  let timer = null;
  let generation = 0; /* bumped on every navigation: late answers of an old page are dropped */
  let rendered = 0;

  /* ---- helpers ------------------------------------------------------------------------- */

  function api(path) {
    if (DATA) {
      const key = path.split('?')[0];
      return Object.prototype.hasOwnProperty.call(DATA, key)
        ? Promise.resolve(DATA[key])
        : Promise.reject(new Error('This report does not include ' + key + '.'));
    }
    return fetch(path, { cache: 'no-store' }).then((r) =>
      r.json().then((j) => {
        if (!r.ok) throw new Error(j.error || r.statusText);
        return j;
      }));
  }

  /* el('a', {href: h}, 'text', node, ...): an element whose children are
   * nodes or strings; strings always become text nodes. */
  function el(tag, attrs, ...kids) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (k === 'class') e.className = v;
      else if (k === 'on') for (const [ev, fn] of Object.entries(v)) e.addEventListener(ev, fn);
      else e.setAttribute(k, String(v));
    }
    for (const k of kids.flat()) if (k !== null && k !== undefined) e.append(k instanceof Node ? k : String(k));
    return e;
  }

  function fmtTime(ts) {
    return ts ? new Date(ts * 1000).toISOString().replace('T', ' ').slice(0, 19) + ' UTC' : '';
  }
  function fmt(v, digits) {
    return v === null || v === undefined || !isFinite(v) ? '–' : Number(v).toFixed(digits === undefined ? 2 : digits);
  }
  function ms(seconds) {
    return seconds === null || seconds === undefined ? '–' : fmt(seconds * 1e3, 3) + ' ms';
  }
  function status(s) {
    const kind = s.live ? 'live' : s.ended ? 'finished' : 'interrupted';
    return el('span', { class: kind }, kind);
  }
  function failureText(f) {
    const parts = Object.entries(f || {}).map(([k, n]) => k + ' ' + n);
    return parts.length ? parts.join(', ') : 'none';
  }
  function knobs(entities) {
    return (entities || []).filter((e) => e[0] !== 'template_version').map((e) => e[0] + '=' + JSON.stringify(e[2])).join('  ');
  }
  function color(i, alpha) {
    return COLORS[i % COLORS.length] + (alpha || '');
  }
  function median(v) {
    const s = v.slice().sort((a, b) => a - b);
    return s.length ? (s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2) : null;
  }
  function hasAnswer(path) {
    return !DATA || Object.prototype.hasOwnProperty.call(DATA, path);
  }
  function link(href, path, label) {
    return hasAnswer(path) ? el('a', { href }, label) : el('span', {}, label);
  }

  /* A table: headers are names (a leading '#' marks a numeric column). */
  function table(headers, rows, cls) {
    const num = headers.map((h) => h.startsWith('#'));
    return el('table', { class: cls || '' },
      el('thead', {}, el('tr', {}, headers.map((h, i) => el('th', { class: num[i] ? 'num' : '' }, num[i] ? h.slice(1) : h)))),
      el('tbody', {}, rows.map((r) => el('tr', {}, r.map((c, i) => el('td', { class: num[i] ? 'num' : '' }, c))))));
  }

  function newChart(parent, cfg, cls) {
    const canvas = el('canvas', { role: 'img' });
    parent.append(el('div', { class: 'chart ' + (cls || '') }, canvas));
    cfg.options = Object.assign({ animation: false, responsive: true, maintainAspectRatio: false }, cfg.options || {});
    const c = new Chart(canvas, cfg);
    charts.push(c);
    return c;
  }
  function axis(text, extra) {
    return Object.assign({ title: { display: true, text } }, extra || {});
  }

  function clearPage() {
    for (const c of charts) c.destroy();
    charts = [];
    app.replaceChildren();
  }
  /* Tells the browser test that a page finished drawing. */
  function done() {
    document.body.dataset.rendered = String(++rendered);
  }
  /* Polls fn while the page stays (never in a report: it does not change). */
  function poll(g, fn) {
    if (DATA) return;
    clearTimeout(timer);
    timer = setTimeout(() => { if (g === generation) fn().catch((e) => { statusEl.textContent = e.message; }); }, POLL_MS);
  }

  /* ---- sessions ------------------------------------------------------------------------ */

  function sessionsPage(g) {
    return api('/api/sessions').then((list) => {
      if (g !== generation) return;
      clearPage();
      app.append(el('h1', {}, 'Tuning sessions'));
      if (!list.length) {
        app.append(el('p', { class: 'meta' }, 'No tuning session in this database yet: relay-tune tune MODEL --db DB makes one.'));
      } else {
        const card = el('div', { class: 'card' }, el('h3', {}, 'Measurements of each session'));
        app.append(card);
        const labels = list.map((s) => s.model + ' · ' + fmtTime(s.started));
        newChart(card, {
          type: 'bar',
          data: { labels, datasets: [
            { label: 'valid', data: list.map((s) => s.ok), backgroundColor: color(2) },
            { label: 'failed', data: list.map((s) => s.records - s.ok), backgroundColor: BAD }] },
          options: { scales: { x: { stacked: true }, y: axis('measurements', { stacked: true, beginAtZero: true }) } },
        });
        app.append(table(['Model', 'Target', 'Host', 'Started', '#Trials', '#Measured/s', 'Failures', 'Status'],
          list.map((s) => [
            link('#/session/' + s.uuid, '/api/sessions/' + s.uuid, s.model || '(no model)'),
            s.target, s.host, fmtTime(s.started), String(s.records), fmt(s.rate), failureText(s.failures), status(s)]),
          'sessions'));
      }
      statusEl.textContent = DATA ? 'report of ' + fmtTime(DATA.report.generated) : list.some((s) => s.live) ? 'live' : '';
      if (list.some((s) => s.live)) poll(g, () => sessionsPage(g));
      done();
    });
  }

  /* ---- a session ----------------------------------------------------------------------- */

  function sessionPage(uuid, g) {
    const st = { s: null, ms: [], last: 0, x: 'n' };
    const base = '/api/sessions/' + encodeURIComponent(uuid);
    function load() {
      return Promise.all([api(base), api(base + '/measurements' + (st.last ? '?after=' + st.last : ''))]).then(([s, ms]) => {
        if (g !== generation) return;
        st.s = s;
        st.ms = st.ms.concat(ms);
        if (ms.length) st.last = ms[ms.length - 1].id;
        render(st, g);
        statusEl.textContent = s.live ? 'live: updated ' + new Date().toLocaleTimeString() : '';
        if (s.live) poll(g, load);
      });
    }
    st.rerender = () => render(st, g);
    return load();
  }

  /* The value a task's curves plot: GFLOP/s where its flops are known, else runs per second. */
  function perf(t, m) {
    if (t.flops) return m.gflops;
    return m.cost ? 1 / m.cost : null;
  }

  function modelCurve(card, st) {
    const cur = {}, calls = {};
    for (const t of st.s.tasks) {
      cur[t.hash] = t.default_cost;
      calls[t.hash] = t.calls > 0 ? t.calls : 1;
    }
    const pts = [];
    for (const m of st.ms) {
      if (m.cost !== null && (cur[m.hash] === null || cur[m.hash] === undefined || m.cost < cur[m.hash])) cur[m.hash] = m.cost;
      const known = Object.keys(cur).filter((h) => cur[h] !== null && cur[h] !== undefined);
      if (known.length) pts.push({ x: st.x === 't' ? m.t : m.n, y: known.reduce((a, h) => a + cur[h] * (calls[h] || 1), 0) * 1e3 });
    }
    newChart(card, {
      type: 'line',
      data: { datasets: [{ label: 'estimated model latency (ms)', data: pts, stepped: true, borderColor: color(0), pointRadius: 0, borderWidth: 2 }] },
      options: { parsing: false, scales: { x: axis(st.x === 't' ? 'wall time since the start (s)' : 'trials of the session', { type: 'linear' }), y: axis('ms', { beginAtZero: true }) } },
    });
  }

  function taskCurve(card, st, t) {
    const mine = st.ms.filter((m) => m.hash === t.hash);
    const byTuner = {};
    const best = [];
    const failed = [];
    let k = 0;
    let top = -Infinity;
    for (const m of mine) {
      k++;
      const x = st.x === 't' ? m.t : k;
      const y = perf(t, m);
      if (y === null) { failed.push({ x, y: 0 }); continue; }
      (byTuner[m.tuner] = byTuner[m.tuner] || []).push({ x, y });
      if (y > top) top = y;
      best.push({ x, y: top });
    }
    const datasets = Object.entries(byTuner).map(([tuner, data], i) => ({
      type: 'scatter', label: 'measured, proposed by ' + tuner, data, backgroundColor: color(i + 1, '99'), borderColor: color(i + 1), pointRadius: 3,
    }));
    datasets.push({ type: 'line', label: 'best so far', data: best, stepped: true, borderColor: '#1d2330', pointRadius: 0, borderWidth: 2 });
    const def = t.flops ? t.default_gflops : t.default_cost ? 1 / t.default_cost : null;
    if (def !== null && mine.length) {
      const xs = mine.map((m, i) => (st.x === 't' ? m.t : i + 1));
      datasets.push({ type: 'line', label: 'default config', data: [{ x: Math.min(...xs), y: def }, { x: Math.max(...xs), y: def }],
        borderColor: BAD, borderDash: [6, 4], pointRadius: 0, borderWidth: 1.5 });
    }
    if (failed.length) datasets.push({ type: 'scatter', label: 'failed', data: failed, pointStyle: 'crossRot', borderColor: BAD, pointRadius: 5 });
    newChart(card, {
      type: 'scatter',
      data: { datasets },
      options: { parsing: false, scales: {
        x: axis(st.x === 't' ? 'wall time since the start (s)' : 'trials of this task', { type: 'linear' }),
        y: axis(t.flops ? 'GFLOP/s' : 'runs per second', { beginAtZero: true }) } },
    });
  }

  function render(st, g) {
    const s = st.s;
    const y = window.scrollY;
    clearPage();
    app.append(el('h1', {}, 'Session: ', s.model || '(no model)'));
    app.append(el('p', { class: 'meta' },
      el('span', {}, 'target ', s.target), el('span', {}, 'host ', s.host), el('span', {}, 'started ', fmtTime(s.started)),
      el('span', {}, String(s.records), ' measurements (', fmt(s.rate), '/s)'), el('span', {}, 'failures: ', failureText(s.failures)), status(s)));
    app.append(el('p', { class: 'meta' }, el('code', {}, s.command)));
    const pick = (v) => el('input', { type: 'radio', name: 'x', value: v, ...(st.x === v ? { checked: 'checked' } : {}),
      on: { change: () => { st.x = v; st.rerender(); } } });
    app.append(el('div', { class: 'controls' }, 'x axis: ', el('label', {}, pick('n'), ' trials'), el('label', {}, pick('t'), ' wall time')));

    const model = el('div', { class: 'card' }, el('h3', {}, 'Model: estimated latency'),
      el('p', { class: 'meta' }, 'the sum over the tasks of the best time found so far (the default config’s before any) times the model’s calls of the task' +
        (s.tasks.some((t) => !(t.calls > 0)) ? ' (calls unknown for some tasks, e.g. of an imported log: counted once)' : '')));
    app.append(model);
    modelCurve(model, st);

    app.append(el('h2', {}, 'Tasks'));
    const grid = el('div', { class: 'grid' });
    app.append(grid);
    for (const t of s.tasks) {
      const card = el('div', { class: 'card task' },
        el('h3', {}, link('#/task/' + t.hash + '/' + encodeURIComponent(t.target), '/api/tasks/' + t.hash, t.template + ' ' + t.hash)),
        el('p', { class: 'meta' },
          el('span', {}, 'best ', fmt(t.best_gflops), ' GFLOP/s'), el('span', {}, 'default ', fmt(t.default_gflops), ' GFLOP/s'),
          el('span', {}, 'speedup ', fmt(t.speedup), '×'), el('span', {}, String(t.records), ' measured, ', String(t.records - t.ok), ' failed'),
          el('span', {}, 'tuners: ', t.tuners)));
      grid.append(card);
      taskCurve(card, st, t);
    }

    app.append(el('h2', {}, 'Failures'));
    if (!s.failure_messages.length) app.append(el('p', { class: 'meta' }, 'No failed measurement.'));
    else {
      app.append(table(['Kind', 'Task', '#Count', 'First', 'Message'],
        s.failure_messages.map((f) => [f.error, f.hash, String(f.count), fmtTime(f.first), el('pre', {}, f.message)]), 'failures'));
    }
    window.scrollTo(0, y);
    done();
  }

  /* ---- a task -------------------------------------------------------------------------- */

  function taskPage(hash, target, g) {
    return api('/api/tasks/' + encodeURIComponent(hash) + (target ? '?target=' + encodeURIComponent(target) : '')).then((t) => {
      if (g !== generation) return;
      clearPage();
      const unit = t.flops ? 'GFLOP/s' : 'runs/s';
      const val = (c) => (t.flops ? c.gflops : 1 / c.cost);
      app.append(el('h1', {}, 'Task: ', t.template, ' ', t.hash));
      app.append(el('p', { class: 'meta key' }, t.key));
      app.append(el('p', { class: 'meta' }, el('span', {}, 'target ', t.target), el('span', {}, fmt(t.flops / 1e6, 1), ' MFLOP'),
        el('span', {}, String(t.records), ' measured, ', String(t.failed), ' failed'), el('span', {}, 'default ', fmt(t.default_gflops), ' GFLOP/s'),
        t.targets.length > 1 ? el('span', {}, 'other targets: ', t.targets.filter((x) => x !== t.target).map((x) =>
          [el('a', { href: '#/task/' + t.hash + '/' + encodeURIComponent(x) }, x), ' '])) : null));

      const card = el('div', { class: 'card' }, el('h3', {}, 'Every valid config, best first'));
      app.append(card);
      newChart(card, {
        type: 'line',
        data: { datasets: [{ label: unit, data: t.configs.map((c, i) => ({ x: i + 1, y: val(c) })), borderColor: color(0), pointRadius: 1.5, showLine: true }] },
        options: { parsing: false, scales: { x: axis('rank', { type: 'linear' }), y: axis(unit, { beginAtZero: true }) } },
      });

      app.append(el('h2', {}, 'Best configs'));
      app.append(table(['#', '#' + unit, '#Speedup', 'Tuner', 'Measured', '#Index', 'Knobs'],
        t.configs.slice(0, 20).map((c, i) => [String(i + 1), fmt(val(c)), fmt(c.speedup) + '×', c.tuner + (c.default ? ' (default)' : ''),
          fmtTime(c.timestamp), String(c.config_index), el('code', {}, knobs(c.entities))]), 'configs'));

      app.append(el('h2', {}, 'Knob values of fast configs'));
      app.append(el('p', { class: 'meta' }, 'for each knob: the best and the median ', unit, ' of the configs with each value'));
      const grid = el('div', { class: 'grid' });
      app.append(grid);
      const byKnob = new Map();
      for (const c of t.configs) {
        for (const e of c.entities) {
          if (e[0] === 'template_version') continue;
          if (!byKnob.has(e[0])) byKnob.set(e[0], { kind: e[1], values: new Map() });
          const v = JSON.stringify(e[2]);
          const m = byKnob.get(e[0]).values;
          if (!m.has(v)) m.set(v, []);
          m.get(v).push(val(c));
        }
      }
      for (const [name, k] of byKnob) {
        const labels = [...k.values.keys()].sort();
        const kc = el('div', { class: 'card knob' }, el('h3', {}, name, ' ', el('span', { class: 'meta' }, '(', k.kind, ')')));
        grid.append(kc);
        newChart(kc, {
          type: 'bar',
          data: { labels, datasets: [
            { label: 'best', data: labels.map((v) => Math.max(...k.values.get(v))), backgroundColor: color(0) },
            { label: 'median', data: labels.map((v) => median(k.values.get(v))), backgroundColor: color(1) }] },
          options: { scales: { y: axis(unit, { beginAtZero: true }) } },
        });
      }
      if (!byKnob.size) grid.append(el('p', { class: 'meta' }, 'No valid config measured yet.'));
      statusEl.textContent = '';
      done();
    });
  }

  /* ---- benchmarks ---------------------------------------------------------------------- */

  const SOURCE_NAMES = { default: 'untuned', tuned: 'tuned', pytorch: 'PyTorch', onednn: 'oneDNN', openblas: 'OpenBLAS' };
  function sourceName(s) {
    return Object.prototype.hasOwnProperty.call(SOURCE_NAMES, s) ? SOURCE_NAMES[s] : s;
  }

  function modelHistory(b) {
    const byModel = new Map();
    for (const r of b.models) {
      if (!byModel.has(r.model)) byModel.set(r.model, []);
      byModel.get(r.model).push(r);
    }
    const grid = el('div', { class: 'grid' });
    app.append(grid);
    for (const [model, rows] of byModel) {
      const runs = [];
      for (const r of rows) {
        const run = (r.commit || '(no commit)').slice(0, 12) + ' @ ' + r.host;
        if (!runs.includes(run)) runs.push(run);
      }
      const sources = [...new Set(rows.map((r) => r.source))];
      const datasets = sources.map((src, i) => {
        const data = runs.map(() => null);
        for (const r of rows) if (r.source === src) data[runs.indexOf((r.commit || '(no commit)').slice(0, 12) + ' @ ' + r.host)] = r.median * 1e3;
        return { label: sourceName(src), data, borderColor: color(i), backgroundColor: color(i), spanGaps: true, pointRadius: 3 };
      });
      const card = el('div', { class: 'card model' }, el('h3', {}, model));
      grid.append(card);
      newChart(card, { type: 'line', data: { labels: runs, datasets }, options: { scales: { x: axis('commit @ host'), y: axis('median latency (ms)', { beginAtZero: true }) } } });
    }
  }

  function kernelTable(b) {
    const latest = new Map(); /* kernel -> source -> newest row */
    for (const r of b.kernels) {
      const k = r.model.slice(7);
      if (!latest.has(k)) latest.set(k, {});
      latest.get(k)[r.source] = r;
    }
    const names = [...latest.keys()];
    const sources = ['default', 'tuned', 'onednn', 'openblas'].filter((s) => names.some((k) => latest.get(k)[s]));
    const g = (k, s) => (latest.get(k)[s] ? latest.get(k)[s].gflops : null);
    /* % of the FMA peak measured in the same run, where every row has one (results
     * stored before schema version 4 have none) */
    const rows = names.flatMap((k) => sources.map((s) => latest.get(k)[s]).filter(Boolean));
    const withPeak = rows.length > 0 && rows.every((r) => r.peak_gflops > 0);
    const pct = (k, s) => { const r = latest.get(k)[s]; return r && r.gflops !== null ? 100 * r.gflops / r.peak_gflops : null; };
    const hosts = [...new Set(rows.map((r) => (r.host || '?') + (r.isa ? ' (' + r.isa + (r.peak_gflops ? ', peak ' + fmt(r.peak_gflops) + ' GFLOP/s' : '') + ')' : '')))];
    const card = el('div', { class: 'card' }, el('h3', {}, withPeak ? '% of the FMA peak of each shape (newest run)' : 'GFLOP/s of each shape (newest run)'),
      el('p', { class: 'meta' }, (withPeak ? 'bars: GFLOP/s over the FP32 FMA peak measured in the same run; ' : 'some results record no peak of their host, so bars are absolute GFLOP/s; ') +
        'hosts: ' + hosts.join(', ')));
    app.append(card);
    const chart = newChart(card, {
      type: 'bar',
      data: { labels: names, datasets: sources.map((s, i) => ({ label: sourceName(s), data: names.map((k) => (withPeak ? pct(k, s) : g(k, s))), backgroundColor: color(i) })) },
      options: { indexAxis: 'y', scales: { x: axis(withPeak ? '% of peak' : 'GFLOP/s', { beginAtZero: true }) } },
    });
    chart.canvas.parentNode.style.height = Math.max(260, 40 + names.length * 14 * Math.max(1, sources.length)) + 'px';
    chart.resize();
    const best = (k) => g(k, 'tuned') !== null ? g(k, 'tuned') : g(k, 'default');
    const cell = (k, s) => fmt(g(k, s)) + (withPeak && pct(k, s) !== null ? ' (' + fmt(pct(k, s)) + '%)' : '');
    app.append(table(['Kernel', '#Untuned', '#Tuned', '#oneDNN', '#OpenBLAS', '#Tuned/oneDNN', '#Tuned/OpenBLAS'],
      names.map((k) => [k, cell(k, 'default'), cell(k, 'tuned'), cell(k, 'onednn'), cell(k, 'openblas'),
        g(k, 'onednn') ? fmt(best(k) / g(k, 'onednn')) : '–', g(k, 'openblas') ? fmt(best(k) / g(k, 'openblas')) : '–']), 'kernels'));
  }

  function benchmarksPage(g) {
    return api('/api/benchmarks').then((b) => {
      if (g !== generation) return;
      clearPage();
      app.append(el('h1', {}, 'Benchmarks'));
      app.append(el('h2', {}, 'Model latency across commits and hosts'));
      if (!b.models.length) app.append(el('p', { class: 'meta' }, 'No model benchmark stored: make bench-e2e DB=DB stores them.'));
      else modelHistory(b);
      app.append(el('h2', {}, 'Kernels against oneDNN and OpenBLAS'));
      if (!b.kernels.length) app.append(el('p', { class: 'meta' }, 'No kernel benchmark stored: make bench-kernels DB=DB stores them.'));
      else kernelTable(b);
      statusEl.textContent = '';
      done();
    });
  }

  /* ---- routing ------------------------------------------------------------------------- */

  function route() {
    clearTimeout(timer);
    const g = ++generation;
    const first = DATA && DATA.report.session ? '/session/' + DATA.report.session : '/';
    const h = location.hash.replace(/^#/, '') || first;
    let parts;
    try {
      parts = h.split('/').filter(Boolean).map(decodeURIComponent);
    } catch (e) {
      parts = ['?'];
    }
    let p;
    if (!parts.length) p = sessionsPage(g);
    else if (parts[0] === 'session' && parts.length === 2) p = sessionPage(parts[1], g);
    else if (parts[0] === 'task' && (parts.length === 2 || parts.length === 3)) p = taskPage(parts[1], parts[2], g);
    else if (parts[0] === 'benchmarks' && parts.length === 1) p = benchmarksPage(g);
    else p = Promise.reject(new Error('No such page: ' + h));
    p.catch((e) => {
      if (g !== generation) return;
      clearPage();
      app.append(el('div', { class: 'error' }, e.message));
      done();
    });
  }

  window.addEventListener('hashchange', route);
  route();
})();
