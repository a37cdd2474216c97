#!/usr/bin/env node
// Runs the CLI from its TypeScript sources through tsx, so `npx vnfm ...` works in the repository.
// Operators without the repository use the standalone bundle `npm run build-cli` makes.
import { register } from 'tsx/esm/api';

register();
await import('../cli/main.ts');
