#!/usr/bin/env node
// Runs the TypeScript sources directly through tsx's loader, so there is no build step.
import { register } from "tsx/esm/api";

register();
await import("../src/node/main.ts");
