// The hostile-input-safe zip reader: honest CSAR layouts read back, and every way a crafted zip can
// lie (names, links, encryption, methods, duplicates, sizes, ratios, CRCs, overlaps, truncation, bombs)
// refused with a PackageError naming the entry.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { deflateRawSync } from 'node:zlib';
import { openArchive, type CsarArchive } from '#lib/packages/archive.ts';
import { bufferSource, type ByteSource } from '#lib/packages/byte-source.ts';
import { PackageError } from '#lib/packages/errors.ts';
import { buildZip, craftZip, deflatedZeros, unixMode } from '../../support/zip-craft.ts';

const MiB = 1024 * 1024;

async function assertPackageError(action: Promise<unknown> | (() => Promise<unknown>), message: RegExp, where: string | undefined): Promise<void> {
  await assert.rejects(action, (error: unknown) => {
    assert.ok(error instanceof PackageError, `expected a PackageError, got ${String(error)}`);
    assert.match(error.message, message);
    assert.equal(error.where, where);
    return true;
  });
}

function sha(algorithm: string, content: string | Buffer): string {
  return createHash(algorithm).update(content).digest('hex');
}

const TOSCA_META = 'TOSCA-Meta-File-Version: 1.0\nCSAR-Version: 1.1\nCreated-by: Tacker\nEntry-Definitions: Definitions/sample_vnfd_top.yaml\n';
const IMAGE = randomBytes(300 * 1024);

async function tackerStyleZip(options: { store?: boolean } = {}): Promise<Buffer> {
  return buildZip(
    {
      'TOSCA-Metadata/': '',
      'TOSCA-Metadata/TOSCA.meta': TOSCA_META,
      'Definitions/': '',
      'Definitions/sample_vnfd_top.yaml': 'tosca_definitions_version: tosca_simple_yaml_1_2\n',
      'Definitions/sample_vnfd_df_simple.yaml': 'tosca_definitions_version: tosca_simple_yaml_1_2\n',
      'BaseHOT/simple/nested/VDU1.yaml': 'heat_template_version: 2013-05-23\n',
      'BaseHOT/simple/sample_hot_top.yaml': 'heat_template_version: 2013-05-23\n',
      'Files/images/cirros.img': IMAGE,
      'Scripts/install.sh': '#!/bin/sh\necho installed\n',
    },
    options,
  );
}

/** Records every range read, to check that the reader never loads the archive whole. */
function recordingSource(buffer: Buffer): { source: ByteSource; reads: Array<{ offset: number; length: number }>; closed: () => boolean } {
  const inner = bufferSource(buffer);
  const reads: Array<{ offset: number; length: number }> = [];
  let closed = false;
  return {
    reads,
    closed: () => closed,
    source: {
      size: inner.size,
      read: (offset, length) => {
        reads.push({ offset, length });
        return inner.read(offset, length);
      },
      close: async () => {
        closed = true;
      },
    },
  };
}

describe('openArchive: honest archives', () => {
  it('lists and reads a Tacker-style CSAR', async () => {
    const archive = await openArchive(bufferSource(await tackerStyleZip()));
    try {
      const listed = archive.entries().map((entry) => `${entry.path}${entry.isDirectory ? '/' : ''}`);
      assert.deepEqual(listed, [
        'TOSCA-Metadata/',
        'TOSCA-Metadata/TOSCA.meta',
        'Definitions/',
        'Definitions/sample_vnfd_top.yaml',
        'Definitions/sample_vnfd_df_simple.yaml',
        'BaseHOT/simple/nested/VDU1.yaml',
        'BaseHOT/simple/sample_hot_top.yaml',
        'Files/images/cirros.img',
        'Scripts/install.sh',
      ]);
      const image = archive.entries().find((entry) => entry.path === 'Files/images/cirros.img');
      assert.equal(image?.uncompressedSize, IMAGE.length);
      assert.equal(image?.isDirectory, false);
      assert.ok(archive.has('TOSCA-Metadata/TOSCA.meta'));
      assert.ok(archive.has('./Scripts/install.sh'), 'a leading ./ in a query is ignored');
      assert.ok(archive.has('Definitions'), 'explicit directories are listed');
      assert.ok(!archive.has('Files/images/missing.img'));

      assert.equal(await archive.readText('TOSCA-Metadata/TOSCA.meta'), TOSCA_META);
      assert.deepEqual(await archive.readBytes('Files/images/cirros.img', MiB), IMAGE);
      assert.equal(await archive.hashEntry('Files/images/cirros.img', 'sha256'), sha('sha256', IMAGE));
      assert.equal(await archive.hashEntry('Scripts/install.sh', 'sha512'), sha('sha512', '#!/bin/sh\necho installed\n'));
      const chunks: Buffer[] = [];
      for await (const chunk of await archive.openStream('BaseHOT/simple/nested/VDU1.yaml')) chunks.push(chunk as Buffer);
      assert.equal(Buffer.concat(chunks).toString(), 'heat_template_version: 2013-05-23\n');
    } finally {
      await archive.close();
    }
  });

  it('reads stored (uncompressed) entries and hashes several entries concurrently', async () => {
    const archive = await openArchive(bufferSource(await tackerStyleZip({ store: true })));
    const [image, script, meta] = await Promise.all([
      archive.hashEntry('Files/images/cirros.img', 'sha384'),
      archive.hashEntry('Scripts/install.sh', 'sha224'),
      archive.readText('TOSCA-Metadata/TOSCA.meta'),
    ]);
    assert.equal(image, sha('sha384', IMAGE));
    assert.equal(script, sha('sha224', '#!/bin/sh\necho installed\n'));
    assert.equal(meta, TOSCA_META);
    await archive.close();
  });

  it('normalises "./" and empty segments in entry names', async () => {
    const archive = await openArchive(bufferSource(craftZip([{ name: './Definitions//vnfd.yaml', content: 'x' }])));
    assert.deepEqual(
      archive.entries().map((entry) => entry.path),
      ['Definitions/vnfd.yaml'],
    );
    assert.equal(await archive.readText('Definitions/vnfd.yaml'), 'x');
  });

  it('reads through bounded ranges, answers the central directory from few reads, and closes its source', async () => {
    const files: Record<string, Buffer> = { 'Files/images/big.img': randomBytes(3 * MiB) };
    for (let i = 0; i < 500; i += 1) files[`Scripts/s${i}.sh`] = Buffer.from(`echo ${i}\n`);
    const zip = await buildZip(files, { store: true });
    const { source, reads, closed } = recordingSource(zip);
    const archive = await openArchive(source);
    assert.equal(archive.entries().length, 501);
    assert.ok(reads.length <= 4, `listing 501 entries took ${reads.length} reads`);
    assert.equal(await archive.hashEntry('Files/images/big.img', 'sha256'), sha('sha256', files['Files/images/big.img']!));
    assert.ok(
      reads.every((read) => read.length <= MiB),
      `largest read was ${Math.max(...reads.map((read) => read.length))} bytes`,
    );
    assert.ok(!closed());
    await archive.close();
    assert.ok(closed(), 'close() closes the ByteSource');
    await assert.rejects(archive.readText('Scripts/s1.sh'), /^Error: the archive is closed$/);
  });

  it('refuses limits that are not positive numbers', async () => {
    await assert.rejects(openArchive(bufferSource(craftZip([])), { maxRatio: 0 }), RangeError);
  });
});

describe('openArchive: what is not a (complete) zip', () => {
  it('refuses bytes that are not a zip', async () => {
    await assertPackageError(
      openArchive(bufferSource(Buffer.from('TOSCA-Meta-File-Version: 1.0\n'.repeat(100)))),
      /^not a zip archive, or a truncated one/,
      undefined,
    );
  });

  it('refuses an empty upload', async () => {
    await assertPackageError(openArchive(bufferSource(Buffer.alloc(0))), /^not a zip archive, or a truncated one/, undefined);
  });

  it('refuses a zip cut short (end record lost)', async () => {
    const zip = await tackerStyleZip();
    await assertPackageError(openArchive(bufferSource(zip.subarray(0, zip.length - 40))), /^not a zip archive, or a truncated one/, undefined);
  });

  it('refuses a zip whose central directory is cut short', async () => {
    const zip = craftZip([
      { name: 'a.txt', content: 'hello' },
      { name: 'b.txt', content: 'world' },
    ]);
    const end = zip.subarray(zip.length - 22);
    const centralDirectoryOffset = end.readUInt32LE(16);
    const truncated = Buffer.concat([zip.subarray(0, centralDirectoryOffset + 50), end]);
    await assertPackageError(openArchive(bufferSource(truncated)), /^the zip central directory is unreadable \(truncated or corrupt archive\)/, undefined);
  });

  it('refuses an end record that claims more entries than the central directory holds', async () => {
    await assertPackageError(
      openArchive(bufferSource(craftZip([{ name: 'a.txt', content: 'hello' }], { entryCount: 3 }))),
      /^the zip central directory is unreadable \(truncated or corrupt archive\)/,
      undefined,
    );
  });
});

describe('openArchive: hostile entry names and attributes', () => {
  const cases: Array<[string, string, RegExp]> = [
    ['parent traversal', '../evil.sh', /^entry name contains a "\.\." segment$/],
    ['traversal in the middle', 'Scripts/../../evil.sh', /^entry name contains a "\.\." segment$/],
    ['absolute path', '/etc/cron.d/evil', /^entry name is an absolute path$/],
    ['backslash', 'Scripts\\..\\evil.sh', /^entry name contains a backslash$/],
    ['drive letter', 'C:/Windows/evil.exe', /^entry name starts with a drive letter$/],
    ['NUL', 'Scripts/install.sh\0.txt', /^entry name contains a NUL character$/],
    ['control character', 'Scripts/\u001b[2Jinstall.sh', /^entry name contains a control character$/],
  ];
  for (const [label, name, message] of cases) {
    it(`refuses an entry name with ${label}`, async () => {
      await assertPackageError(
        openArchive(
          bufferSource(
            craftZip([
              { name: 'ok.txt', content: 'ok' },
              { name, content: 'x' },
            ]),
          ),
        ),
        message,
        name,
      );
    });
  }

  it('refuses a symlink', async () => {
    const zip = craftZip([{ name: 'Files/passwd', content: '/etc/passwd', externalAttributes: unixMode(0o120777) }]);
    await assertPackageError(openArchive(bufferSource(zip)), /^symbolic links are not allowed in a package$/, 'Files/passwd');
  });

  it('refuses other special files', async () => {
    const zip = craftZip([{ name: 'Files/fifo', externalAttributes: unixMode(0o010644) }]);
    await assertPackageError(openArchive(bufferSource(zip)), /^special files are not allowed in a package \(unix file type 0o10000\)$/, 'Files/fifo');
  });

  it('refuses an encrypted entry', async () => {
    const zip = craftZip([{ name: 'Files/secret.bin', data: randomBytes(40), uncompressedSize: 28, flags: 0x801 }]);
    await assertPackageError(openArchive(bufferSource(zip)), /^entry is encrypted; encrypted zip entries are not supported$/, 'Files/secret.bin');
  });

  it('refuses compression methods other than stored and deflate', async () => {
    const zip = craftZip([{ name: 'Files/data.bz2', data: randomBytes(20), uncompressedSize: 100, method: 12 }]);
    await assertPackageError(
      openArchive(bufferSource(zip)),
      /^unsupported compression method 12 \(only 0 stored and 8 deflate are accepted\)$/,
      'Files/data.bz2',
    );
  });

  it('refuses duplicate names', async () => {
    const zip = craftZip([
      { name: 'Scripts/install.sh', content: 'echo honest' },
      { name: 'Scripts/install.sh', content: 'echo evil' },
    ]);
    await assertPackageError(openArchive(bufferSource(zip)), /^duplicate entry: "Scripts\/install.sh" is already in the archive$/, 'Scripts/install.sh');
  });

  it('refuses names that are duplicates once normalised', async () => {
    const zip = craftZip([
      { name: 'Scripts/install.sh', content: 'echo honest' },
      { name: './Scripts//install.sh', content: 'echo evil' },
    ]);
    await assertPackageError(openArchive(bufferSource(zip)), /^duplicate entry: "Scripts\/install.sh" is already in the archive$/, './Scripts//install.sh');
  });

  it('refuses a path that is both a file and a directory', async () => {
    const zip = craftZip([
      { name: 'Files', content: 'a file' },
      { name: 'Files/images/cirros.img', content: 'image' },
    ]);
    await assertPackageError(openArchive(bufferSource(zip)), /^"Files" is a file but the archive also has entries below it$/, 'Files/images/cirros.img');
  });

  it('refuses entries whose central records point at the same data', async () => {
    const zip = craftZip([
      { name: 'a.img', method: 8, content: 'A'.repeat(1000) },
      { name: 'b.img', method: 8, content: 'A'.repeat(1000), centralOffset: 0, localName: 'a.img' },
    ]);
    await assertPackageError(openArchive(bufferSource(zip)), /^entry data overlaps entry "(a|b)\.img"$/, 'a.img');
  });

  it('refuses an entry whose local header names another file', async () => {
    const archive = await openArchive(bufferSource(craftZip([{ name: 'Scripts/install.sh', localName: 'Scripts/evilish.sh', content: 'echo' }])));
    await assertPackageError(
      archive.readText('Scripts/install.sh'),
      /^the local file header names "Scripts\/evilish.sh", not this entry$/,
      'Scripts/install.sh',
    );
  });
});

describe('openArchive: sizes, ratios and zip bombs', () => {
  it('refuses more entries than the limit before reading the central directory', async () => {
    const zip = craftZip([{ name: 'a.txt', content: 'a' }], { entryCount: 10_001 });
    await assertPackageError(openArchive(bufferSource(zip)), /^the archive has 10001 entries, more than the limit of 10000$/, undefined);
  });

  it('refuses more entries than a configured limit', async () => {
    const zip = await buildZip({ 'a.txt': 'a', 'b.txt': 'b', 'c.txt': 'c', 'd.txt': 'd' });
    await assertPackageError(openArchive(bufferSource(zip), { maxEntries: 3 }), /^the archive has 4 entries, more than the limit of 3$/, undefined);
  });

  it('refuses an entry declaring more than 2 GiB', async () => {
    const zip = craftZip([{ name: 'Files/images/huge.img', method: 8, data: deflateRawSync(Buffer.alloc(10)), uncompressedSize: 3 * 1024 * MiB }]);
    await assertPackageError(
      openArchive(bufferSource(zip)),
      /^entry declares 3221225472 bytes uncompressed, more than the limit of 2147483648$/,
      'Files/images/huge.img',
    );
  });

  it('refuses a total declared size above the limit', async () => {
    const zip = await buildZip({ 'a.bin': randomBytes(600), 'b.bin': randomBytes(600) });
    await assertPackageError(
      openArchive(bufferSource(zip), { maxTotalBytes: 1000 }),
      /^the entries declare more than 1000 bytes uncompressed in total; a package may expand to at most that \(MaxPackageExpandedBytes\)$/,
      'b.bin',
    );
  });

  it('refuses an honest zip bomb by its declared compression ratio, without inflating it', async () => {
    const bomb = await deflatedZeros(200 * MiB);
    const zip = craftZip([{ name: 'Files/images/zeros.img', method: 8, data: bomb.data, crc32: bomb.crc32, uncompressedSize: 200 * MiB }]);
    await assertPackageError(
      openArchive(bufferSource(zip)),
      /^compression ratio \d+:1 \(\d+ bytes inflating to 209715200\) exceeds the limit of 200:1$/,
      'Files/images/zeros.img',
    );
  });

  it('cuts off a zip bomb that lies about its size, with bounded memory', async () => {
    const bomb = await deflatedZeros(200 * MiB);
    // Declares 1 MiB (small enough to escape the ratio check), inflates to 200 MiB.
    const zip = craftZip([{ name: 'Files/images/liar.img', method: 8, data: bomb.data, crc32: 0, uncompressedSize: MiB }]);
    const archive = await openArchive(bufferSource(zip));
    const before = process.memoryUsage().rss;
    const started = Date.now();
    await assertPackageError(
      archive.hashEntry('Files/images/liar.img', 'sha256'),
      /^content is larger than the 1048576 bytes the central directory declares \(zip bomb or corrupt archive\); reading stopped$/,
      'Files/images/liar.img',
    );
    await assertPackageError(archive.readBytes('Files/images/liar.img', 2 * MiB), /^content is larger than the 1048576 bytes/, 'Files/images/liar.img');
    assert.ok(process.memoryUsage().rss - before < 64 * MiB);
    assert.ok(Date.now() - started < 2000, 'reading stops at the declared size instead of inflating 200 MiB');
    await archive.close();
  });

  it('streams 200 MiB out of a 200 KiB entry (ratio limit lifted) with memory growth under 64 MiB', async () => {
    const bomb = await deflatedZeros(200 * MiB);
    const zip = craftZip([{ name: 'Files/images/zeros.img', method: 8, data: bomb.data, crc32: bomb.crc32, uncompressedSize: 200 * MiB }]);
    const archive = await openArchive(bufferSource(zip), { maxRatio: Number.POSITIVE_INFINITY });
    const expected = createHash('sha256');
    const zeros = Buffer.alloc(MiB);
    for (let i = 0; i < 200; i += 1) expected.update(zeros);
    const before = process.memoryUsage().rss;
    let peak = before;
    let bytes = 0;
    const hash = createHash('sha256');
    for await (const chunk of await archive.openStream('Files/images/zeros.img')) {
      hash.update(chunk as Buffer);
      bytes += (chunk as Buffer).length;
      if (bytes % (4 * MiB) < (chunk as Buffer).length) peak = Math.max(peak, process.memoryUsage().rss);
    }
    assert.equal(bytes, 200 * MiB);
    assert.equal(hash.digest('hex'), expected.digest('hex'));
    assert.ok(peak - before < 64 * MiB, `rss grew by ${Math.round((peak - before) / MiB)} MiB`);
    await archive.close();
  });

  it('refuses content shorter than declared', async () => {
    const archive = await openArchive(bufferSource(craftZip([{ name: 'a.txt', method: 8, content: 'short', uncompressedSize: 100 }])));
    await assertPackageError(archive.readText('a.txt'), /^content is smaller than the 100 bytes the central directory declares$/, 'a.txt');
  });

  it('refuses content whose CRC-32 is wrong', async () => {
    const archive = await openArchive(bufferSource(craftZip([{ name: 'Scripts/install.sh', method: 8, content: 'echo evil\n', crc32: 0xdeadbeef }])));
    await assertPackageError(
      archive.hashEntry('Scripts/install.sh', 'sha256'),
      /^CRC-32 mismatch: central directory says deadbeef, content is [0-9a-f]{8}$/,
      'Scripts/install.sh',
    );
  });

  it('refuses corrupt deflate data', async () => {
    const archive = await openArchive(
      bufferSource(craftZip([{ name: 'a.txt', method: 8, data: Buffer.from([0xff, 0xff, 0xff, 0xff, 0xff, 0xff]), uncompressedSize: 10 }])),
    );
    await assertPackageError(archive.readText('a.txt'), /^corrupt deflate data: /, 'a.txt');
  });
});

describe('CsarArchive reads', () => {
  async function small(): Promise<CsarArchive> {
    return openArchive(
      bufferSource(await buildZip({ 'Definitions/': '', 'Definitions/a.yaml': 'a: 1\n', 'Files/latin1.txt': Buffer.from([0x63, 0x61, 0x66, 0xe9]) })),
    );
  }

  it('refuses a missing file', async () => {
    const archive = await small();
    await assertPackageError(archive.readText('Definitions/missing.yaml'), /^no such file in the archive$/, 'Definitions/missing.yaml');
    await assertPackageError(archive.hashEntry('Definitions/missing.yaml', 'sha256'), /^no such file in the archive$/, 'Definitions/missing.yaml');
  });

  it('refuses a directory', async () => {
    const archive = await small();
    await assertPackageError(archive.openStream('Definitions'), /^is a directory, not a file$/, 'Definitions/');
  });

  it('refuses text larger than allowed', async () => {
    const archive = await small();
    await assertPackageError(archive.readText('Definitions/a.yaml', 3), /^entry is 5 bytes, more than the 3 bytes accepted here$/, 'Definitions/a.yaml');
  });

  it('refuses text that is not UTF-8', async () => {
    const archive = await small();
    await assertPackageError(archive.readText('Files/latin1.txt'), /^content is not valid UTF-8 text$/, 'Files/latin1.txt');
  });
});
