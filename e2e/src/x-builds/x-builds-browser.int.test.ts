import { execFileSync } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { startFakeXApi, type FakeXApi } from '@sbc/app-x-builds';
import { OWNER_KEY as XB_OWNER_KEY, startStack, type XbJob, type XBuildsStack } from '../support/stack';

// Verification in a real browser. CI installs Debian's chromium and ffmpeg; without Chromium this file is
// skipped (and says so), never faked.
const CHROMIUM = process.env.X_BUILDS_CHROMIUM_PATH || '/usr/bin/chromium';
const hasChromium = (() => {
  try {
    accessSync(CHROMIUM, constants.X_OK);
    return true;
  } catch {
    return false;
  }
})();
if (!hasChromium)
  console.warn(
    `x-builds-browser.int.test.ts SKIPPED: no Chromium at ${CHROMIUM} (apt-get install -y chromium, or set ` +
      `X_BUILDS_CHROMIUM_PATH)`,
  );

const ACCOUNT_ID = '4200000001';
const TOKENS = { bearerToken: 'fake-x-app-bearer', userAccessToken: 'fake-x-user-token' };
const settled = (job: XbJob) => ['done', 'refused', 'failed', 'cancelled'].includes(job.status);

/** PNG width and height from its IHDR chunk. */
const pngSize = (png: Buffer) => ({ width: png.readUInt32BE(16), height: png.readUInt32BE(20) });

/** Standard deviation of a PNG's grey levels, decoded by ffmpeg (not by the browser that took it). */
function greySpread(png: Buffer): number {
  const grey = execFileSync(
    'ffmpeg',
    [
      '-hide_banner',
      '-loglevel',
      'error',
      '-f',
      'png_pipe',
      '-i',
      'pipe:0',
      '-f',
      'rawvideo',
      '-pix_fmt',
      'gray',
      'pipe:1',
    ],
    { input: png, maxBuffer: 64 * 1024 * 1024 },
  );
  let sum = 0;
  let squares = 0;
  for (const value of grey) {
    sum += value;
    squares += value * value;
  }
  const mean = sum / grey.length;
  return Math.sqrt(squares / grey.length - mean * mean);
}

/** Frames and seconds of a clip, counted by ffprobe. */
function probeClip(clip: Buffer): { frames: number; seconds: number; codec: string } {
  const out = execFileSync(
    'ffprobe',
    [
      '-v',
      'error',
      '-count_frames',
      '-select_streams',
      'v:0',
      '-show_entries',
      'stream=nb_read_frames,codec_name:format=duration',
      '-of',
      'json',
      'pipe:0',
    ],
    { input: clip },
  );
  const probe = JSON.parse(out.toString('utf8')) as {
    streams: { nb_read_frames: string; codec_name: string }[];
    format: { duration: string };
  };
  return {
    frames: Number(probe.streams[0]!.nb_read_frames),
    seconds: Number(probe.format.duration),
    codec: probe.streams[0]!.codec_name,
  };
}

(hasChromium ? describe : describe.skip)('x builds: verification in headless Chromium', () => {
  let x: FakeXApi;
  let stack: XBuildsStack;
  const key = XB_OWNER_KEY;
  const ids = { ball: '', throws: '' };
  let mentionId = '';

  const submit = async (prompt: string) =>
    (await stack.api('POST', '/v1/x-builds', { key, body: { source: { type: 'api', prompt } } })).body.id as string;

  /** A media route's answer, bytes intact, checked against /docs/openapi.json. */
  async function media(path: string, headers: Record<string, string> = {}) {
    const res = await fetch(`${stack.edge.url}${path}`, { headers: { authorization: `Bearer ${key}`, ...headers } });
    const body = Buffer.from(await res.arrayBuffer());
    const type = res.headers.get('content-type') ?? undefined;
    stack.contract.check(
      'GET',
      path,
      res.status,
      type?.includes('json') ? JSON.parse(body.toString('utf8')) : body.length > 0 ? '<bytes>' : undefined,
      type,
    );
    return { status: res.status, headers: res.headers, body };
  }

  beforeAll(async () => {
    x = await startFakeXApi({ accountId: ACCOUNT_ID, ...TOKENS });
    stack = await startStack({
      label: 'xb_browser',
      builds: { x: { apiUrl: x.url, accountId: ACCOUNT_ID, ...TOKENS }, env: { X_BUILDS_CHROMIUM_PATH: CHROMIUM } },
    });
    // The API build and the X one at once (an author has one active job at a time, the X author is another).
    ids.ball = await submit('A bouncing ball on a dark canvas');
    // Its first version loads an outside image, which the CSP blocks: it is built twice.
    mentionId = x.mention({ text: '@builder make a tiny drum machine sim:csp', author_id: 'u-drums' }).id;
  }, 60_000);
  afterAll(async () => {
    await stack?.stop();
    await x?.stop();
  });

  it(
    'an API prompt ends done with non-blank PNG screenshots at 1280×800 and 390×844 and a clip of several frames, ' +
      'served with ETags and byte ranges',
    async () => {
      const job = await stack.waitForJob(key, ids.ball, settled, 75_000);
      // The checks are in the message when it did not end done.
      expect({ status: job.status, error: job.error }).toEqual({ status: 'done', error: null });
      const outcome = Object.fromEntries(
        job.checks.map((check: { name: string; outcome: string }) => [check.name, check.outcome]),
      );
      expect(outcome).toEqual({
        http: 'passed',
        html: 'passed',
        csp: 'passed',
        ready_marker: 'passed',
        uncaught_exceptions: 'passed',
        console_errors: 'passed',
        csp_violations: 'passed',
        ready_runtime: 'passed',
        screenshot: 'passed',
        screenshot_mobile: 'passed',
        accessibility: 'passed',
        clip: 'passed',
      });
      expect(job.media).toEqual(['screenshot', 'screenshot_mobile', 'clip']);
      expect(job.findings).toEqual([]);

      const desktop = await media(`/v1/x-builds/${job.id}/screenshot`);
      expect(desktop.status).toBe(200);
      expect(desktop.headers.get('content-type')).toBe('image/png');
      expect(desktop.headers.get('cache-control')).toBe('private, max-age=60');
      expect(desktop.headers.get('etag')).toMatch(/^"[0-9a-f]{32}"$/);
      expect(desktop.body.subarray(0, 8)).toEqual(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));
      expect(pngSize(desktop.body)).toEqual({ width: 1280, height: 800 });
      expect(greySpread(desktop.body)).toBeGreaterThan(5);
      const mobile = await media(`/v1/x-builds/${job.id}/screenshot?viewport=mobile`);
      expect(mobile.status).toBe(200);
      expect(pngSize(mobile.body)).toEqual({ width: 390, height: 844 });
      expect(greySpread(mobile.body)).toBeGreaterThan(5);
      expect(mobile.headers.get('etag')).not.toBe(desktop.headers.get('etag'));
      const again = await media(`/v1/x-builds/${job.id}/screenshot`, { 'if-none-match': desktop.headers.get('etag')! });
      expect(again.status).toBe(304);
      expect(again.body.length).toBe(0);

      const clip = await media(`/v1/x-builds/${job.id}/clip`);
      expect(clip.status).toBe(200);
      expect(clip.headers.get('content-type')).toMatch(/^video\/(mp4|webm)$/);
      expect(clip.headers.get('accept-ranges')).toBe('bytes');
      const probe = probeClip(clip.body);
      expect(probe.frames).toBeGreaterThan(1);
      expect(probe.seconds).toBeGreaterThanOrEqual(3);
      expect(probe.seconds).toBeLessThanOrEqual(5);
      // The animation painted many frames, not one held still.
      const painted = Number(
        /from (\d+) painted frame/.exec(job.checks.find((check: { name: string }) => check.name === 'clip').detail)![1],
      );
      expect(painted).toBeGreaterThan(1);

      const size = clip.body.length;
      const head = await media(`/v1/x-builds/${job.id}/clip`, { range: 'bytes=0-99' });
      expect(head.status).toBe(206);
      expect(head.headers.get('content-range')).toBe(`bytes 0-99/${size}`);
      expect(head.body).toEqual(clip.body.subarray(0, 100));
      const tail = await media(`/v1/x-builds/${job.id}/clip`, { range: 'bytes=-10' });
      expect(tail.status).toBe(206);
      expect(tail.headers.get('content-range')).toBe(`bytes ${size - 10}-${size - 1}/${size}`);
      expect(tail.body).toEqual(clip.body.subarray(size - 10));
      const stale = await media(`/v1/x-builds/${job.id}/clip`, {
        range: 'bytes=0-9',
        'if-range': '"not-the-current-tag"',
      });
      expect(stale.status).toBe(200);
      expect(stale.body.length).toBe(size);
      const past = await media(`/v1/x-builds/${job.id}/clip`, { range: `bytes=${size}-` });
      expect(past.status).toBe(416);
      expect(past.headers.get('content-range')).toBe(`bytes */${size}`);

      const stats = await stack.api('GET', '/v1/x-builds/stats?window=1h', { key });
      expect(stats.body.accessibility).toEqual({
        jobs: expect.any(Number),
        by_impact: expect.any(Object),
        by_rule: expect.any(Object),
      });
    },
    90_000,
  );

  it(
    'an app that throws on load fails verification, goes to fixing with what the browser saw, and ends done once ' +
      'repaired',
    async () => {
      ids.throws = await submit('A clock that crashes sim:throws');
      const job = await stack.waitForJob(key, ids.throws, settled, 75_000);
      expect(job.status).toBe('done');
      expect(job.fix_attempts).toBe(1);
      expect(job.stages.map((stage: { name: string }) => stage.name)).toEqual([
        'screening',
        'building',
        'auditing',
        'publishing',
        'verifying',
        'fixing',
        'auditing',
        'publishing',
        'verifying',
        'drafting',
      ]);
      expect(job.findings).toEqual(
        expect.arrayContaining([
          { check: 'uncaught_exceptions', message: expect.stringContaining('sim: the app failed to start') },
          { check: 'ready_runtime', message: expect.stringContaining('did not set the ready marker') },
        ]),
      );
      // The repaired app passed every check and was recorded.
      expect(job.checks.filter((check: { outcome: string }) => check.outcome === 'failed')).toEqual([]);
      expect(job.media).toEqual(['screenshot', 'screenshot_mobile', 'clip']);
    },
    90_000,
  );

  it(
    "a CSP violation sends an X mention's app to fixing; its reply then carries the repaired app's screenshot, " +
      'uploaded to X and attached',
    async () => {
      const deadline = Date.now() + 75_000;
      while (x.replies.length === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 200));
      expect(x.replies).toHaveLength(1);
      expect(x.uploads).toHaveLength(1);
      const [upload] = x.uploads;
      expect(upload).toMatchObject({ media_category: 'tweet_image', media_type: 'image/png' });
      expect(x.replies[0]).toMatchObject({ in_reply_to_tweet_id: mentionId, media_ids: [upload!.id] });
      const job = ((await stack.api('GET', '/v1/x-builds', { key })).body.data as XbJob[]).find(
        (j) => j.source.post_id === mentionId,
      )!;
      expect(job).toMatchObject({
        status: 'done',
        fix_attempts: 1,
        findings: [
          { check: 'csp_violations', message: expect.stringContaining('https://pixel.sim-upstream.invalid/p.png') },
        ],
      });
      expect((await media(`/v1/x-builds/${job.id}/screenshot`)).body).toEqual(upload!.bytes);
    },
    90_000,
  );

  it('a take-down makes the app answer 410 and removes its screenshots and clip', async () => {
    const job = (await stack.api('GET', `/v1/x-builds/${ids.ball}`, { key })).body as XbJob;
    expect((await stack.appGet(job.slug)).status).toBe(200);
    const down = await stack.api('DELETE', `/v1/x-builds/${job.id}/publish`, { key });
    expect(down.status).toBe(200);
    expect(down.body).toMatchObject({ taken_down_at: expect.any(String), media: [] });
    expect((await stack.appGet(job.slug)).status).toBe(410);
    for (const path of ['screenshot', 'screenshot?viewport=mobile', 'clip']) {
      const gone = await media(`/v1/x-builds/${job.id}/${path}`);
      expect(gone.status).toBe(404);
    }
    expect(await stack.builds.database.prisma.jobMedia.count({ where: { jobId: job.id } })).toBe(0);
  });
});
