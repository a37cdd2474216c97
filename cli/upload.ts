// Streams a file as an HTTP PUT body with its Content-Length (API Gateway and S3 want the length
// up front; the file is never held in memory), reporting bytes sent as they go out.
import { createReadStream } from 'node:fs';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { unreachable } from './client.ts';

export interface UploadAnswer {
  status: number;
  statusText: string;
  text: string;
}

export async function putFile(
  url: string,
  path: string,
  size: number,
  headers: Record<string, string>,
  onProgress: (sent: number) => void,
): Promise<UploadAnswer> {
  const target = new URL(url);
  const send = target.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise<UploadAnswer>((resolveAnswer, reject) => {
    const request = send(target, { method: 'PUT', headers: { ...headers, 'Content-Length': String(size) } }, (response: IncomingMessage) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () =>
        resolveAnswer({ status: response.statusCode ?? 0, statusText: response.statusMessage ?? '', text: Buffer.concat(chunks).toString('utf8') }),
      );
      response.on('error', reject);
    });
    request.on('error', (error) => reject(unreachable(url, error)));
    let sent = 0;
    const counter = new Transform({
      transform(chunk: Buffer, _encoding, done) {
        sent += chunk.length;
        onProgress(sent);
        done(null, chunk);
      },
    });
    // A server that answers before reading the whole body (a 4xx) ends the pipeline early: the answer is what counts.
    pipeline(createReadStream(path), counter, request).catch(() => undefined);
  });
}
