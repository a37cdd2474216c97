// Types for the local stand-ins that ship none: only what the runtime uses.
declare module 'dynalite' {
  import type { Server } from 'node:http';
  interface DynaliteOptions {
    path?: string;
    createTableMs?: number;
    deleteTableMs?: number;
    updateTableMs?: number;
    maxItemSizeKb?: number;
  }
  export default function dynalite(options?: DynaliteOptions): Server;
}

declare module 's3rver' {
  import type { AddressInfo } from 'node:net';
  interface S3rverOptions {
    address?: string;
    port?: number;
    directory: string;
    silent?: boolean;
    configureBuckets?: Array<{ name: string; configs?: unknown[] }>;
  }
  export default class S3rver {
    constructor(options: S3rverOptions);
    run(): Promise<AddressInfo>;
    close(): Promise<void>;
    /** The server run() started. */
    httpServer: import('node:http').Server;
    on(event: 'event', listener: (event: never) => void): this;
  }
}
