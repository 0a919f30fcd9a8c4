// Lighthouse (mobile, its default) on several pages in one Chromium, for the browser suite.
//
//   node lighthouse-run.mjs '{"chrome": "/usr/bin/chromium", "pages": [{"name", "url", "cookie"?}],
//                             "dump": "<dir for each page's whole report>"?}'
//
// One Chromium is started (chrome-launcher, which comes with Lighthouse) and every page is
// audited in turn against it, so the whole run costs one browser start. Prints one JSON
// object: for each page its four category scores (0-100) and, for any category below 100,
// the audits that cost it points.
//
// A logged-in page gets its cookies in the browser's own jar (not as an extra header,
// which Chromium drops as soon as the jar holds a cookie for the site). So Lighthouse's
// own storage reset, which would clear them, is off, and each run starts instead from an
// empty cache, no service worker and only its own cookies.
import fs from "node:fs";
import * as chromeLauncher from "chrome-launcher";
import lighthouse from "lighthouse";
import puppeteer from "puppeteer-core";

const args = JSON.parse(process.argv[2]);
const CATEGORIES = ["performance", "accessibility", "best-practices", "seo"];

const chrome = await chromeLauncher.launch({
  chromePath: args.chrome,
  chromeFlags: ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"],
});
const browser = await puppeteer.connect({ browserURL: `http://127.0.0.1:${chrome.port}` });

async function audit(page) {
  const tab = await browser.newPage();
  try {
    const cdp = await tab.createCDPSession();
    const origin = new URL(page.url).origin;
    await cdp.send("Network.clearBrowserCookies");
    await cdp.send("Network.clearBrowserCache");
    await cdp.send("Storage.clearDataForOrigin", {
      origin,
      storageTypes: "local_storage,indexeddb,service_workers,cache_storage,shader_cache",
    });
    for (const pair of (page.cookie || "").split(";")) {
      const at = pair.indexOf("=");
      if (at < 1) continue;
      await cdp.send("Network.setCookie", {
        name: pair.slice(0, at).trim(), value: pair.slice(at + 1).trim(), url: origin + "/",
      });
    }
    const flags = {
      port: chrome.port,
      output: "json",
      logLevel: "error",
      onlyCategories: CATEGORIES,
      disableStorageReset: true,
    };
    const result = await lighthouse(page.url, flags, undefined, tab);
    return result.lhr;
  } finally {
    await tab.close();
  }
}

const out = {};
try {
  for (const page of args.pages) {
    // Lighthouse itself says to run again after a trace fault (NO_NAVSTART and the like):
    // up to three tries, and a page's error is reported only if all of them fail.
    let lhr;
    let tries = 0;
    while (tries < 3) {
      tries += 1;
      lhr = await audit(page);
      if (!lhr.runtimeError) break;
    }
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
    // The whole report too, for a look at what cost the points (the e2e artifacts).
    if (args.dump) fs.writeFileSync(`${args.dump}/lighthouse-${page.name}.json`, JSON.stringify(lhr));
    // The figures behind the performance score (simulated slow 4G and a 4× slower CPU).
    const metrics = {};
    for (const id of ["first-contentful-paint", "largest-contentful-paint", "total-blocking-time",
      "cumulative-layout-shift", "speed-index"]) {
      const a = lhr.audits[id];
      if (a) metrics[id] = { value: a.numericValue, score: a.score };
    }
    out[page.name] = {
      url: page.url, final: lhr.finalDisplayedUrl, scores, lost, metrics, tries,
      error: lhr.runtimeError ? lhr.runtimeError.code : null,
    };
  }
} finally {
  await browser.disconnect();
  await chrome.kill();
}
process.stdout.write(JSON.stringify(out) + "\n");
