#!/usr/bin/env node
// The npm registry mirror this project is developed against does not serve some other-platform
// builds (e.g. @next/swc-darwin-arm64), so `npm install` leaves them out of package-lock.json and a
// later `npm ci` refuses the lock as out of sync. This adds an entry for each such optional
// platform package, with os/cpu read from its name, so that `npm ci` skips it on other platforms
// and installs it from the real registry where it applies. Run after `npm install` changes the lock.
import { readFileSync, writeFileSync } from "node:fs";

const file = new URL("../package-lock.json", import.meta.url);
const lock = JSON.parse(readFileSync(file, "utf8"));
const packages = lock.packages;

const PLATFORMS = [
  [/android-arm64/, { os: ["android"], cpu: ["arm64"] }],
  [/darwin-arm64/, { os: ["darwin"], cpu: ["arm64"] }],
  [/darwin-x64/, { os: ["darwin"], cpu: ["x64"] }],
  [/freebsd-x64/, { os: ["freebsd"], cpu: ["x64"] }],
  [/linux-arm-gnueabihf/, { os: ["linux"], cpu: ["arm"] }],
  [/linux-arm64-gnu/, { os: ["linux"], cpu: ["arm64"], libc: ["glibc"] }],
  [/linux-arm64-musl/, { os: ["linux"], cpu: ["arm64"], libc: ["musl"] }],
  [/linux-x64-gnu/, { os: ["linux"], cpu: ["x64"], libc: ["glibc"] }],
  [/linux-x64-musl/, { os: ["linux"], cpu: ["x64"], libc: ["musl"] }],
  [/wasm32-wasi/, { cpu: ["wasm32"] }],
  [/win32-arm64/, { os: ["win32"], cpu: ["arm64"] }],
  [/win32-x64/, { os: ["win32"], cpu: ["x64"] }],
  // node-llama-cpp names its prebuilt binaries mac-*/win-*/linux-* (plus a GPU suffix).
  [/@node-llama-cpp\/mac-arm64/, { os: ["darwin"], cpu: ["arm64"] }],
  [/@node-llama-cpp\/mac-x64/, { os: ["darwin"], cpu: ["x64"] }],
  [/@node-llama-cpp\/win-arm64/, { os: ["win32"], cpu: ["arm64"] }],
  [/@node-llama-cpp\/win-x64/, { os: ["win32"], cpu: ["x64"] }],
  [/@node-llama-cpp\/linux-riscv64/, { os: ["linux"], cpu: ["riscv64"] }],
];

let added = 0;
for (const [location, entry] of Object.entries(packages)) {
  for (const [name, version] of Object.entries(entry.optionalDependencies ?? {})) {
    const nested = `${location}/node_modules/${name}`;
    if (packages[nested] || packages[`node_modules/${name}`]) continue;
    const platform = PLATFORMS.find(([pattern]) => pattern.test(name));
    if (!platform) {
      console.warn(`complete-lockfile: ${name} is missing and its platform is unknown; left alone`);
      continue;
    }
    packages[`node_modules/${name}`] = { version, ...platform[1], optional: true };
    added++;
  }
}
writeFileSync(file, `${JSON.stringify(lock, null, 2)}\n`);
console.log(`complete-lockfile: added ${added} optional platform entr${added === 1 ? "y" : "ies"}`);
