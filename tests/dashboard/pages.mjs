// pages.mjs — drives the dashboard's pages in headless Chromium (Debian's
// /usr/bin/chromium through playwright-core) for tests/dashboard/browser.sh.
//
//   node pages.mjs BASE_URL REPORT.html SCREENSHOT_DIR [TUNE_COMMAND_JSON]
//
// For each page of the server at BASE_URL, and for the static report file:
// loads it, waits until the application says it drew, and checks that no
// console error or failed request happened, that every chart's canvas has
// pixels drawn, and that the rows and charts match what the API answers
// (the API itself is checked against the database by test_api). It also
// checks that the record imported with <script> and HTML markup in its
// strings shows as text. Last, with a command (a JSON array: a `relay-tune
// tune` on the same database), it runs it and checks that the page of the
// running session updates by itself as measurements arrive. Prints "PASS what" or "FAIL what: why" per check
// (browser.sh turns them into TAP) and saves a screenshot of every page.
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const require = createRequire(import.meta.url);
const here = path.dirname(fileURLToPath(import.meta.url));
const [base, reportFile, shots, tuneJson] = process.argv.slice(2);
let failed = 0;
function check(cond, what, why) {
  if (cond) console.log('PASS ' + what);
  else {
    failed++;
    console.log('FAIL ' + what + (why ? ': ' + why : ''));
  }
}

let chromium;
try {
  ({ chromium } = require(path.join(here, 'node_modules', 'playwright-core')));
} catch (e) {
  ({ chromium } = require('playwright-core'));
}
const api = async (p) => (await fetch(base + p)).json();

const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox'], headless: true });
const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
const page = await context.newPage();
let problems = [];
page.on('console', (m) => { if (m.type() === 'error' || m.type() === 'warning') problems.push(m.type() + ': ' + m.text()); });
page.on('pageerror', (e) => problems.push('page error: ' + e.message));
page.on('requestfailed', (r) => problems.push('request failed: ' + r.url()));
page.on('dialog', (d) => { problems.push('dialog opened: ' + d.message()); d.dismiss(); });

// Opens url (or only changes the fragment) and waits until the page drew.
async function visit(url, name) {
  await page.goto('about:blank');
  problems = [];
  await page.goto(url);
  await page.waitForFunction(() => document.body && document.body.dataset.rendered, null, { timeout: 30000 });
  const info = await page.evaluate(() => {
    const canvases = [...document.querySelectorAll('#app canvas')];
    const blank = canvases.filter((c) => {
      const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
      for (let i = 3; i < d.length; i += 4) if (d[i]) return false;
      return true;
    }).length;
    return { canvases: canvases.length, blank, error: (document.querySelector('#app .error') || {}).textContent || '' };
  });
  await page.screenshot({ path: path.join(shots, name + '.png'), fullPage: true });
  check(!info.error, name + ': the page loaded', info.error);
  check(problems.length === 0, name + ': no console error, failed request or dialog', problems.join('; '));
  check(info.canvases > 0 && info.blank === 0, name + ': every chart drew (' + info.canvases + ' canvases)', info.blank + ' blank');
  return info;
}
const count = (sel) => page.$$eval(sel, (els) => els.length);

const sessions = await api('/api/sessions');
const real = sessions.find((s) => s.command.includes(' tune '));
const marked = sessions.find((s) => s.model.includes('<script>'));

// ---- every endpoint over the tuned database ----
{
  const ends = ['/api/sessions', '/api/best', '/api/benchmarks'];
  let total = 0;
  let measured = 0;
  const hashes = new Set();
  for (const x of sessions) {
    ends.push('/api/sessions/' + x.uuid, '/api/sessions/' + x.uuid + '/measurements');
    total += x.records;
    measured += (await api('/api/sessions/' + x.uuid + '/measurements')).length;
    for (const t of (await api('/api/sessions/' + x.uuid)).tasks) hashes.add(t.hash);
  }
  for (const h of hashes) ends.push('/api/tasks/' + h);
  const statuses = await Promise.all(ends.map(async (e) => (await fetch(base + e)).status));
  check(statuses.every((st) => st === 200), 'api: every endpoint answers 200 (' + ends.length + ' requests)', ends.filter((e, i) => statuses[i] !== 200).join(' '));
  check(measured === total && total > 0, 'api: the measurements of each session add up to its records (' + total + ')', measured + ' != ' + total);
  check((await api('/api/best')).length === hashes.size, 'api: a best config per task (' + hashes.size + ')');
}

// ---- sessions ----
let info = await visit(base + '/#/', 'sessions');
check(await count('table.sessions tbody tr') === sessions.length, 'sessions: a row per session (' + sessions.length + ')');
check(info.canvases === 1, 'sessions: the measurements chart');
const injected = await page.evaluate(() => ({
  pwned: window.__pwned !== undefined,
  elements: document.querySelectorAll('#app b, #app img, #app script, #app iframe').length,
  text: [...document.querySelectorAll('table.sessions td')].some((td) => td.textContent.includes('<script>window.__pwned=1</script>')),
}));
check(marked && injected.text && !injected.pwned && injected.elements === 0,
  'sessions: a model name with <script> and markup shows as text', JSON.stringify(injected));

// ---- one session ----
const s = await api('/api/sessions/' + real.uuid);
info = await visit(base + '/#/session/' + real.uuid, 'session');
check(await count('.card.task') === s.tasks.length, 'session: a card per task (' + s.tasks.length + ')');
check(info.canvases === 1 + s.tasks.length, 'session: the model curve and a curve per task');
const legends = await page.evaluate(() => Chart.getChart(document.querySelector('.card.task canvas')).data.datasets.map((d) => d.label));
check(legends.includes('best so far') && legends.includes('default config') && legends.some((l) => l.startsWith('measured, proposed by ')),
  'session: a task chart has the scatter by tuner, the best-so-far line and the default line', legends.join(', '));
await page.click('input[value=t]');
check(await page.evaluate(() => Chart.getChart(document.querySelector('.card.task canvas')).options.scales.x.title.text) ===
  'wall time since the start (s)', 'session: the x axis switches to wall time');

// the imported session's failures, with their markup as text
info = await visit(base + '/#/session/' + marked.uuid, 'session-failures');
const fs = await api('/api/sessions/' + marked.uuid);
check(await count('table.failures tbody tr') === fs.failure_messages.length && fs.failure_messages.length > 0,
  'session: a row per failure kind and message (' + fs.failure_messages.length + ')');
check(await page.evaluate(() => [...document.querySelectorAll('table.failures pre')].some((p) => p.textContent.includes('<img src=x onerror=window.__pwned=2>')) &&
  window.__pwned === undefined && !document.querySelector('#app img')), 'session: an error message with markup shows as text');

// ---- a task ----
const t = s.tasks[0];
const task = await api('/api/tasks/' + t.hash + '?target=' + encodeURIComponent(t.target));
info = await visit(base + '/#/task/' + t.hash + '/' + encodeURIComponent(t.target), 'task');
check(await count('table.configs tbody tr') === Math.min(20, task.configs.length), 'task: the best configs table');
const knobNames = new Set(task.configs.flatMap((c) => c.entities.map((e) => e[0])).filter((n) => n !== 'template_version'));
check(await count('.card.knob') === knobNames.size && info.canvases === 1 + knobNames.size,
  'task: a knob chart per knob (' + knobNames.size + ')');

// ---- benchmarks ----
const b = await api('/api/benchmarks');
info = await visit(base + '/#/benchmarks', 'benchmarks');
const models = new Set(b.models.map((r) => r.model)).size;
const kernels = new Set(b.kernels.map((r) => r.model)).size;
check(await count('.card.model') === models && info.canvases === models + 1, 'benchmarks: a history chart per model and the kernel bars');
check(await count('table.kernels tbody tr') === kernels, 'benchmarks: a row per kernel (' + kernels + ')');
check((await page.textContent('body')).includes('% of the FMA peak of each shape') && (await page.textContent('table.kernels')).includes('%)'),
  'benchmarks: kernel bars and cells as % of the FMA peak measured in the run');

// ---- the static report, from disk ----
const url = pathToFileURL(reportFile).href;
info = await visit(url + '#/', 'report-sessions');
check(await count('table.sessions tbody tr') === sessions.length, 'report: the sessions list');
info = await visit(url + '#/session/' + real.uuid, 'report-session');
check(info.canvases === 1 + s.tasks.length, 'report: the session with its curves');
info = await visit(url + '#/benchmarks', 'report-benchmarks');
check(info.canvases === models + 1, 'report: the benchmarks');
check(await page.evaluate(() => window.__pwned === undefined), 'report: no injected script ran');

// ---- a running session updates by itself ----
if (tuneJson) {
  const cmd = JSON.parse(tuneJson);
  const tune = spawn(cmd[0], cmd.slice(1), { stdio: 'ignore' });
  const exited = new Promise((resolve) => tune.on('exit', (code, sig) => resolve(code === null ? sig : code)));
  const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
  let live;
  for (let i = 0; i < 300 && !live; i++) {
    await sleep(200);
    live = (await api('/api/sessions')).find((x) => x.live && x.records > 0);
  }
  check(live, 'live: the running tune shows as a live session');
  if (live) {
    await page.goto('about:blank');
    problems = [];
    await page.goto(base + '/#/session/' + live.uuid);
    await page.waitForFunction(() => document.body.dataset.rendered, null, { timeout: 30000 });
    const points = () => page.evaluate(() => Chart.getChart(document.querySelector('.card canvas')).data.datasets[0].data.length);
    const first = await points();
    const rendered = await page.evaluate(() => document.body.dataset.rendered);
    let later = first;
    for (let i = 0; i < 240 && later <= first; i++) {
      await sleep(250);
      later = await points();
    }
    check(later > first, 'live: the session page redraws by itself as measurements arrive', first + ' -> ' + later + ' points');
    check(await page.evaluate((r) => document.body.dataset.rendered !== r, rendered) &&
      (await page.textContent('#status')).startsWith('live'), 'live: without a reload, saying it is live');
    await page.screenshot({ path: path.join(shots, 'session-live.png'), fullPage: true });
    check(problems.length === 0, 'live: no console error while updating', problems.join('; '));
  }
  tune.kill('SIGINT');
  const how = await exited;
  check(how === 0, 'live: the tune stops cleanly on SIGINT', 'exit ' + how);
}

await browser.close();
process.exit(failed ? 1 : 0);
