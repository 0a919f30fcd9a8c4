// Lighthouse (mobile, its default) on several pages in one Chromium, for the browser suite.
//
//   node lighthouse-run.mjs '{"chrome": "/usr/bin/chromium", "pages": [{"name", "url", "cookie"?}]}'
//
// One Chromium is started (chrome-launcher, which comes with Lighthouse) and every page is
// audited in turn against it, so the whole run costs one browser start. Prints one JSON
// object: for each page its four category scores (0-100) and, for any category below 100,
// the audits that cost it points.
import * as chromeLauncher from "chrome-launcher";
import lighthouse from "lighthouse";

const args = JSON.parse(process.argv[2]);
const CATEGORIES = ["performance", "accessibility", "best-practices", "seo"];

const chrome = await chromeLauncher.launch({
  chromePath: args.chrome,
  chromeFlags: ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"],
});
const out = {};
try {
  for (const page of args.pages) {
    const flags = {
      port: chrome.port,
      output: "json",
      logLevel: "error",
      onlyCategories: CATEGORIES,
      extraHeaders: page.cookie ? { Cookie: page.cookie } : undefined,
    };
    const result = await lighthouse(page.url, flags);
    const lhr = result.lhr;
    const scores = {};
    const lost = {};
    for (const id of CATEGORIES) {
      const cat = lhr.categories[id];
      scores[id] = cat.score === null ? null : Math.round(cat.score * 100);
      if (cat.score !== 1) {
        lost[id] = cat.auditRefs
          .filter((ref) => ref.weight > 0 && lhr.audits[ref.id].score !== null && lhr.audits[ref.id].score < 1)
          .map((ref) => `${ref.id} (${lhr.audits[ref.id].score}): ${lhr.audits[ref.id].title}`);
      }
    }
    out[page.name] = { url: page.url, final: lhr.finalDisplayedUrl, scores, lost, error: lhr.runtimeError || null };
  }
} finally {
  await chrome.kill();
}
process.stdout.write(JSON.stringify(out) + "\n");
