// The independent client of hub's interop test (TestHFJS): @huggingface/hub.
//   node interop.mjs download REPO HUB_URL CACHE_DIR   snapshotDownload into CACHE_DIR
//                                                      (a failure is answered as {error}, the
//                                                      cache left as the library left it)
//   node interop.mjs scan CACHE_DIR                    scanCacheDir of CACHE_DIR
// The answer is the last line, "RESULT " and JSON (the library logs to stdout).
import { snapshotDownload, scanCacheDir } from "@huggingface/hub";

const [cmd, ...a] = process.argv.slice(2);
let out;
if (cmd === "download") {
  try {
    out = { dir: await snapshotDownload({ repo: a[0], hubUrl: a[1], cacheDir: a[2] }) };
  } catch (e) {
    out = { error: String(e) };
  }
} else if (cmd === "scan") {
  const r = await scanCacheDir(a[0]);
  out = { repos: r.repos, warnings: r.warnings.map(String) };
} else {
  throw new Error("usage: interop.mjs download|scan ...");
}
console.log("RESULT " + JSON.stringify(out));
