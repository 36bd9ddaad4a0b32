#!/usr/bin/env node
// A complete engine for the arena's engine protocol (clients/ENGINE_PROTOCOL.md),
// in Node with no packages: it answers `go` with a random move from `legal`.
// Run: arena bot --engine "node random_engine.mjs"  /  arena engine check "node random_engine.mjs"
import { createInterface } from "node:readline";

let legal = [];
const say = (line) => process.stdout.write(line + "\n");

for await (const line of createInterface({ input: process.stdin })) {
  const words = line.trim().split(/\s+/);
  switch (words[0]) {
    case "arena": // the handshake: who we are, then the version we speak
      say("id name random-engine-node");
      say("id author Collapsi Arena examples");
      say("arenaok 1");
      break;
    case "isready":
      say("readyok");
      break;
    case "legal":
      legal = words.slice(1);
      break;
    case "go":
      say("bestmove " + (legal.length ? legal[Math.floor(Math.random() * legal.length)] : "resign"));
      break;
    case "quit":
      process.exit(0);
    // newgame, position, setoption, stop, gameover and unknown lines need no answer
  }
}
