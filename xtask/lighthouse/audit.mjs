// Lighthouse's accessibility category on every console page, signed in: what
// `cargo xtask lighthouse` runs (xtask/src/lighthouse.rs starts the server and this script).
//
// Lighthouse's Node API is given a page of a Chromium that puppeteer-core (lighthouse's own
// dependency) launched, after the console's sign-in was put in that page's localStorage the way
// "remember" keeps it (web/src/session.rs); `disableStorageReset` keeps Lighthouse from
// clearing it before each run, so every page is audited signed in, with real data: the script
// creates it through the API first and starts a real agent for the session pages.
//
// Environment: TUNNEL_URL (the console), TUNNEL_API_KEY (an admin key), TUNNEL_AGENT (the
// tunnel-agent binary), LIGHTHOUSE_DIR (where npm installed lighthouse), CHROMIUM, OUT_DIR.
// Prints one Markdown table of scores; exits 1 when a page scores under MIN_SCORE.

import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const MIN_SCORE = 95;
const env = (name) => {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set (run this through cargo xtask lighthouse)`);
  return value;
};
const base = env('TUNNEL_URL');
const apiKey = env('TUNNEL_API_KEY');
const outDir = env('OUT_DIR');

// The packages live in the tool cache, not next to this script.
const require = createRequire(join(env('LIGHTHOUSE_DIR'), 'node_modules', 'lighthouse', 'package.json'));
const load = async (name) => import(pathToFileURL(require.resolve(name)).href);
const lighthouse = (await load('lighthouse')).default;
const puppeteer = (await load('puppeteer-core')).default;

async function api(method, path, body) {
  const response = await fetch(`${base}/api${path}`, {
    method,
    headers: {
      Authorization: `Bearer ${apiKey}`,
      'Service-Version': '2',
      ...(body ? { 'Content-Type': 'application/json' } : {}),
    },
    body: body ? JSON.stringify(body) : undefined,
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`${method} ${path} answered ${response.status}: ${text}`);
  return text ? JSON.parse(text) : null;
}

// Real data, so no list is empty (the same resources as tests/tests/accessibility.rs).
const credential = await api('POST', '/credentials', {
  description: 'laptop', acl: ['bind:*.example.com', 'bind:env=prod'],
});
const ca = await api('POST', '/ssh_certificate_authorities', { description: 'ops ca' });
const backend = await api('POST', '/backends/tunnel_group', { description: 'prod backend', labels: { env: 'prod' } });
const edge = await api('POST', '/edges/tls', { description: 'app edge', hostports: ['app.example.com:443'] });
await api('PUT', `/edges/tls/${edge.id}/backend`, { backend_id: backend.id });
const destination = await api('POST', '/event_destinations', {
  description: 'hooks', format: 'json', target: { webhook: { url: 'https://hooks.example.com/tunnel' } },
});
const subscription = await api('POST', '/event_subscriptions', {
  description: 'credential changes', sources: [{ type: 'credential_created.v0' }], destination_ids: [destination.id],
});
const key = await api('POST', '/api_keys', { description: 'ci key' });

const agent = spawn(env('TUNNEL_AGENT'), ['--server', base, '--bind', 'app.example.com'], {
  env: { ...process.env, TUNNEL_AUTHTOKEN: credential.token },
  stdio: 'ignore',
});
// Not keeping Node alive: when the script ends (or fails), 'exit' stops the agent.
agent.unref();
process.on('exit', () => agent.kill('SIGKILL'));
let session;
for (let i = 0; i < 100 && !session; i++) {
  session = (await api('GET', '/tunnel_sessions')).tunnel_sessions[0]?.id;
  if (!session) await new Promise((r) => setTimeout(r, 100));
}
if (!session) throw new Error('the agent opened no session');
const event = (await api('GET', '/events')).events[0].id;
const me = await api('GET', '/me');

const routes = [
  ['sign-in', '/', false],
  ['credentials', '/credentials'],
  ['new credential', '/credentials/new'],
  ['credential', `/credentials/${credential.id}`],
  ['SSH CAs', '/ssh-cas'],
  ['new SSH CA', '/ssh-cas/new'],
  ['SSH CA', `/ssh-cas/${ca.id}`],
  ['tunnel sessions', '/sessions'],
  ['tunnel session', `/sessions/${session}`],
  ['TLS edges', '/tls-edges'],
  ['TLS edge', `/tls-edges/${edge.id}`],
  ['backends', '/backends'],
  ['new backend', '/backends/new'],
  ['backend', `/backends/${backend.id}`],
  ['event destinations', '/event-destinations'],
  ['new event destination', '/event-destinations/new'],
  ['event destination', `/event-destinations/${destination.id}`],
  ['event subscriptions', '/event-subscriptions'],
  ['new event subscription', '/event-subscriptions/new'],
  ['event subscription', `/event-subscriptions/${subscription.id}`],
  ['activity', '/activity'],
  ['activity event', `/activity/${event}`],
  ['API keys', '/api-keys'],
  ['new API key', '/api-keys/new'],
  ['API key', `/api-keys/${key.id}`],
  ['users', '/users'],
  ['user', `/users/${me.principal_id}`],
];
const variants = [
  ['mobile', 'light'], ['mobile', 'dark'], ['desktop', 'light'], ['desktop', 'dark'],
];
const desktop = {
  formFactor: 'desktop',
  screenEmulation: { mobile: false, width: 1350, height: 940, deviceScaleFactor: 1, disabled: false },
};

const browser = await puppeteer.launch({
  executablePath: env('CHROMIUM'),
  headless: true,
  args: ['--headless', '--no-sandbox', '--disable-gpu'],
});
const results = [];
let failed = false;
try {
  const page = await browser.newPage();
  await page.goto(base);
  for (const [name, route, signedIn = true] of routes) {
    const row = { name, route, scores: {}, issues: {} };
    for (const [formFactor, theme] of variants) {
      // The sign-in as "remember" keeps it, or none for the sign-in page; the theme as the
      // console's switch keeps it (web/src/theme.rs).
      await page.evaluate((auth, theme) => {
        if (auth) localStorage.setItem('tunnel-console.auth', auth);
        else localStorage.removeItem('tunnel-console.auth');
        sessionStorage.removeItem('tunnel-console.auth');
        localStorage.setItem('tunnel-console.theme', theme);
      }, signedIn ? JSON.stringify({ base_url: '/api', api_key: apiKey }) : null, theme);
      const flags = {
        logLevel: 'error',
        output: 'json',
        onlyCategories: ['accessibility'],
        disableStorageReset: true,
        // Only used for thumbnails of nodes in the HTML report, which is not written.
        disableFullPageScreenshot: true,
        ...(formFactor === 'desktop' ? desktop : {}),
      };
      const result = await lighthouse(`${base}${route}`, flags, undefined, page);
      const lhr = result.lhr;
      if (lhr.runtimeError) throw new Error(`${route}: ${lhr.runtimeError.message}`);
      // A page that signed out (or never signed in) would be audited as the sign-in screen.
      const signInShown = await page.evaluate(() => !!document.querySelector('.signin'));
      if (signInShown === signedIn) throw new Error(`${route}: signed in = ${!signInShown}, expected ${signedIn}`);
      const score = Math.round(lhr.categories.accessibility.score * 100);
      const variant = `${formFactor} ${theme}`;
      row.scores[variant] = score;
      row.issues[variant] = lhr.categories.accessibility.auditRefs
        .map((ref) => lhr.audits[ref.id])
        .filter((a) => a.score !== null && a.score < 1 && a.scoreDisplayMode === 'binary')
        .map((a) => ({
          id: a.id,
          title: a.title,
          nodes: (a.details?.items || []).map((i) => i.node?.selector).filter(Boolean),
        }));
      if (score < MIN_SCORE) failed = true;
      process.stderr.write(`  ${route} (${variant}): ${score}\n`);
    }
    results.push(row);
  }
} finally {
  await browser.close();
}

mkdirSync(outDir, { recursive: true });
writeFileSync(join(outDir, 'accessibility.json'), JSON.stringify(results, null, 2));
const names = variants.map(([f, t]) => `${f} ${t}`);
console.log(`| page | ${names.join(' | ')} |`);
console.log(`|---|${names.map(() => '---:').join('|')}|`);
for (const row of results) {
  console.log(`| ${row.name} (\`${row.route.replace(/[a-z]+_[0-9A-Za-z]+/, '{id}')}\`) | ${names.map((n) => row.scores[n]).join(' | ')} |`);
}
for (const row of results) {
  for (const [variant, issues] of Object.entries(row.issues)) {
    for (const issue of issues) {
      console.log(`- ${row.route} (${variant}): ${issue.id}: ${issue.title} ${issue.nodes.join(', ')}`);
    }
  }
}
console.log(`\nDetails: ${join(outDir, 'accessibility.json')}`);
if (failed) {
  console.error(`some page scored under ${MIN_SCORE}`);
  process.exit(1);
}
