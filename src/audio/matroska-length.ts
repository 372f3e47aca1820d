/**
 * The length of a Matroska/WebM file read from its blocks (docs/decisions.md "Audio length
 * from the audio itself"). music-metadata reads only the Segment Info's Duration, a float the
 * file's author writes (and MediaRecorder files often lack); it skips the clusters. Here the
 * clusters are walked:
 * - a block starts at its cluster's Timecode plus its own relative timecode, times the
 *   TimecodeScale; it lasts its BlockDuration, or for Opus the packets it holds (opus-frames.ts),
 *   or the track's DefaultDuration for each frame; a track's length is from its earliest start
 *   to its latest end, less the track's CodecDelay (samples the decoder discards);
 * - an Opus track (CodecID `A_OPUS` or one it starts, as FFmpeg matches it) is also measured by
 *   the samples of all its packets but the last (which the file may trim), what a decoder plays
 *   whatever the timestamps say; the larger counts. Header stripping (ContentCompAlgo 3) is
 *   undone for the packets' first bytes; any other content encoding of an Opus track with
 *   blocks (compression, encryption) hides its packets, and the file is unreadable;
 * - audio tracks count (and tracks whose type is not given); the longest one is the length.
 * Segments and Clusters are entered, not skipped by their sizes (MediaRecorder and live files
 * leave them unknown; a size that ends a cluster early must not hide blocks); where the
 * structure breaks, the walk resyncs at the next Cluster ID, as players do. An element of
 * unknown size that is read (Info, Tracks, TrackEntry, BlockGroup) ends where an element of
 * its own or a higher level starts, and the walk goes on from there: no byte is walked twice
 * at one level. Over 64 tracks, or past its work budget (walk-budget.ts), the file is
 * unreadable (`UnreadableAudio` is thrown); otherwise a file it cannot follow measures what it
 * followed.
 */
import { eachChild, type EbmlReader, type Element, readElement, readUint, type Stop, vintLength } from './ebml.ts';
import { OPUS_RATE, opusPacketSamples } from './opus-frames.ts';
import { UnreadableAudio, WalkBudget } from './walk-budget.ts';

const ID = {
  EBML: 0x1a45dfa3,
  SEGMENT: 0x18538067,
  SEEK_HEAD: 0x114d9b74,
  INFO: 0x1549a966,
  TIMECODE_SCALE: 0x2ad7b1,
  DURATION: 0x4489,
  TRACKS: 0x1654ae6b,
  TRACK_ENTRY: 0xae,
  TRACK_NUMBER: 0xd7,
  TRACK_TYPE: 0x83,
  CODEC_ID: 0x86,
  DEFAULT_DURATION: 0x23e383,
  CODEC_DELAY: 0x56aa,
  CONTENT_ENCODINGS: 0x6d80,
  CONTENT_ENCODING: 0x6240,
  CONTENT_ENCODING_SCOPE: 0x5032,
  CONTENT_ENCODING_TYPE: 0x5033,
  CONTENT_COMPRESSION: 0x5034,
  CONTENT_COMP_ALGO: 0x4254,
  CONTENT_COMP_SETTINGS: 0x4255,
  CUES: 0x1c53bb6b,
  CHAPTERS: 0x1043a770,
  TAGS: 0x1254c367,
  ATTACHMENTS: 0x1941a469,
  CLUSTER: 0x1f43b675,
  TIMECODE: 0xe7,
  POSITION: 0xa7,
  PREV_SIZE: 0xab,
  SILENT_TRACKS: 0x5854,
  ENCRYPTED_BLOCK: 0xaf,
  SIMPLE_BLOCK: 0xa3,
  BLOCK_GROUP: 0xa0,
  BLOCK: 0xa1,
  BLOCK_DURATION: 0x9b,
} as const;

/** Elements of the top levels (the EBML header, the Segment and its children): any of them ends an element of unknown size being read. */
const TOP = [ID.EBML, ID.SEGMENT, ID.SEEK_HEAD, ID.INFO, ID.TRACKS, ID.CUES, ID.CHAPTERS, ID.TAGS, ID.ATTACHMENTS, ID.CLUSTER];
const ENDS_TOP_CHILD = new Set<number>(TOP);
const ENDS_TRACK_ENTRY = new Set<number>([...TOP, ID.TRACK_ENTRY]);
const ENDS_BLOCK_GROUP = new Set<number>([...TOP, ID.TIMECODE, ID.POSITION, ID.PREV_SIZE, ID.SILENT_TRACKS, ID.ENCRYPTED_BLOCK, ID.SIMPLE_BLOCK, ID.BLOCK_GROUP]);

const CLUSTER_ID = Buffer.from([0x1f, 0x43, 0xb6, 0x75]);
const AUDIO_TRACK = 2;
const NS_PER_SECOND = 1e9;
/** The most CodecDelay taken off: Ogg Opus's largest pre-skip (16 bits at 48 kHz), about 1.37 s. */
const MAX_CODEC_DELAY_NS = (65_535 * NS_PER_SECOND) / OPUS_RATE;
/** Track entries, and track numbers seen in blocks, beyond which a file is unreadable (a recording has one or two). */
export const MAX_TRACKS = 64;
/** ContentCompAlgo 3: the bytes in ContentCompSettings were stripped from the start of every frame. */
const HEADER_STRIPPING = 3;
const NOTHING = Buffer.alloc(0);

interface Track {
  audio: boolean | undefined;
  opus: boolean;
  defaultDurationNs: number;
  /** Nanoseconds at the start the decoder discards (Opus pre-skip). */
  codecDelayNs: number;
  /** Bytes stripped from the start of every frame (header stripping). */
  stripped: Buffer;
  /** A content encoding of the frames that is not header stripping: their packets cannot be read. */
  encoded: boolean;
}

interface Measured {
  startNs: number;
  endNs: number;
  /** Samples of the track's Opus packets, and of the last one (which the file may trim). */
  opusSamples: number;
  lastSamples: number;
}

interface State extends EbmlReader {
  scaleNs: number;
  /** The Segment Info's Duration, in nanoseconds (its TimecodeScale's ticks). */
  headerNs: number;
  tracks: Map<number, Track>;
  measured: Map<number, Measured>;
}

function readInfo(state: State, info: Element): Stop {
  let duration = 0;
  const stop = eachChild(state, info, ENDS_TOP_CHILD, (e) => {
    if (e.id === ID.TIMECODE_SCALE) {
      const scale = readUint(state.bytes, e);
      if (scale > 0) state.scaleNs = scale;
    } else if (e.id === ID.DURATION) {
      if (e.end - e.start === 4) duration = state.bytes.readFloatBE(e.start);
      else if (e.end - e.start === 8) duration = state.bytes.readDoubleBE(e.start);
    }
    return undefined;
  });
  // A Duration that is not a number stays one (Math.max keeps NaN): the file is then unreadable (audio-file.ts).
  if (!(duration <= 0)) state.headerNs = Math.max(state.headerNs, duration * state.scaleNs);
  return stop;
}

/** The frames' content encodings (ContentEncodings, 0x6d80): header stripping is undone, anything else marks the track encoded. */
function readEncodings(state: State, encodings: Element, track: Track): void {
  // Unknown sizes inside a TrackEntry are not followed: the encodings are then not known.
  if (encodings.unknown) track.encoded = true;
  eachChild(state, encodings, ENDS_TRACK_ENTRY, (encoding) => {
    if (encoding.id !== ID.CONTENT_ENCODING) return undefined;
    if (encoding.unknown) track.encoded = true;
    let scope = 1;
    let type = 0;
    let algo = 0;
    let settings: Buffer = Buffer.alloc(0);
    eachChild(state, encoding, ENDS_TRACK_ENTRY, (e) => {
      if (e.id === ID.CONTENT_ENCODING_SCOPE) scope = readUint(state.bytes, e);
      else if (e.id === ID.CONTENT_ENCODING_TYPE) type = readUint(state.bytes, e);
      else if (e.id === ID.CONTENT_COMPRESSION) {
        if (e.unknown) track.encoded = true;
        eachChild(state, e, ENDS_TRACK_ENTRY, (c) => {
          if (c.id === ID.CONTENT_COMP_ALGO) algo = readUint(state.bytes, c);
          else if (c.id === ID.CONTENT_COMP_SETTINGS) settings = state.bytes.subarray(c.start, c.end);
          return undefined;
        });
      }
      return undefined;
    });
    // Scope bit 1: the frames (2 is the CodecPrivate, 4 the next encoding's settings).
    if ((scope & 1) === 0) return undefined;
    if (type === 0 && algo === HEADER_STRIPPING && track.stripped.length === 0) track.stripped = settings;
    else track.encoded = true;
    return undefined;
  });
}

function readTrackEntry(state: State, entry: Element): Stop {
  let number: number | undefined;
  const track: Track = { audio: undefined, opus: false, defaultDurationNs: 0, codecDelayNs: 0, stripped: Buffer.alloc(0), encoded: false };
  const stop = eachChild(state, entry, ENDS_TRACK_ENTRY, (e) => {
    const { bytes } = state;
    if (e.id === ID.TRACK_NUMBER) number = readUint(bytes, e);
    else if (e.id === ID.TRACK_TYPE) track.audio = readUint(bytes, e) === AUDIO_TRACK;
    // FFmpeg takes a CodecID that starts with one it knows as that codec ("A_OPUS/X" is Opus).
    else if (e.id === ID.CODEC_ID) track.opus = (bytes.toString('latin1', e.start, e.end).split('\0')[0] ?? '').startsWith('A_OPUS');
    else if (e.id === ID.DEFAULT_DURATION) track.defaultDurationNs = readUint(bytes, e);
    else if (e.id === ID.CODEC_DELAY) track.codecDelayNs = Math.min(readUint(bytes, e), MAX_CODEC_DELAY_NS);
    else if (e.id === ID.CONTENT_ENCODINGS) readEncodings(state, e, track);
    return undefined;
  });
  if (number !== undefined) {
    state.tracks.set(number, track);
    if (state.tracks.size > MAX_TRACKS) throw new UnreadableAudio(`more than ${MAX_TRACKS} tracks`);
  }
  return stop;
}

function readTracks(state: State, tracks: Element): Stop {
  return eachChild(state, tracks, ENDS_TOP_CHILD, (entry) => (entry.id === ID.TRACK_ENTRY ? readTrackEntry(state, entry) : undefined));
}

/** The frames of a laced block's body from `at` to `end` as [start, length] (lacing 1 Xiph, 2 fixed, 3 EBML); [] when the lacing does not add up. */
function frames(bytes: Buffer, at: number, end: number, lacing: number): [number, number][] {
  const count = (bytes[at] ?? 0) + 1;
  let p = at + 1;
  const sizes: number[] = [];
  if (lacing === 2) {
    if ((end - p) % count !== 0) return [];
    for (let i = 1; i < count; i++) sizes.push((end - p) / count);
  } else if (lacing === 1) {
    for (let i = 1; i < count; i++) {
      let size = 0;
      let b = 255;
      while (b === 255 && p < end) {
        b = bytes[p++] ?? 0;
        size += b;
      }
      sizes.push(size);
    }
  } else {
    let previous = 0;
    for (let i = 1; i < count; i++) {
      const length = vintLength(bytes[p] ?? 0, 8);
      if (length === 0 || p + length > end) return [];
      let value = (bytes[p] ?? 0) & (0xff >> length);
      for (let k = 1; k < length; k++) value = value * 256 + (bytes[p + k] ?? 0);
      p += length;
      // After the first size, each is a signed difference from the one before.
      previous = i === 1 ? value : previous + value - (2 ** (7 * length - 1) - 1);
      sizes.push(previous);
    }
  }
  const laced = sizes.reduce((sum, size) => sum + size, 0);
  if (sizes.some((size) => size < 0) || p + laced > end) return [];
  const spans: [number, number][] = [];
  for (const size of [...sizes, end - p - laced]) {
    spans.push([p, size]);
    p += size;
  }
  return spans;
}

/** Samples of an Opus frame at `start` of `length` bytes whose first bytes were stripped to `stripped`. */
function frameSamples(bytes: Buffer, start: number, length: number, stripped: Buffer): number {
  if (stripped.length === 0) return length === 0 ? 0 : opusPacketSamples(bytes[start], length > 1 ? bytes[start + 1] : undefined);
  const second = stripped.length > 1 ? stripped[1] : length > 0 ? bytes[start] : undefined;
  return opusPacketSamples(stripped[0], second);
}

/** A SimpleBlock's or Block's track, timecode and frames, measured into the state. */
function readBlock(state: State, block: Element, clusterTimecode: number, durationTicks: number | undefined): void {
  const { bytes } = state;
  // A block's lacing is read within it: its bytes count once.
  state.budget.spend(block.end - block.start);
  const trackLength = vintLength(bytes[block.start] ?? 0, 8);
  if (trackLength === 0 || block.start + trackLength + 3 > block.end) return;
  let track = (bytes[block.start] ?? 0) & (0xff >> trackLength);
  for (let i = 1; i < trackLength; i++) track = track * 256 + (bytes[block.start + i] ?? 0);
  const relative = bytes.readInt16BE(block.start + trackLength);
  const flags = bytes[block.start + trackLength + 2] ?? 0;
  const body = block.start + trackLength + 3;
  const lacing = (flags >> 1) & 3;
  const spans: [number, number][] = lacing === 0 ? [[body, block.end - body]] : frames(bytes, body, block.end, lacing);
  const info = state.tracks.get(track);
  const stripped = info?.stripped ?? NOTHING;
  let opusSamples = 0;
  let lastSamples = 0;
  for (const [start, length] of spans) {
    lastSamples = frameSamples(bytes, start, length, stripped);
    opusSamples += lastSamples;
  }
  const startNs = (clusterTimecode + relative) * state.scaleNs;
  const contentNs = info?.opus === true ? (opusSamples * NS_PER_SECOND) / OPUS_RATE : (info?.defaultDurationNs ?? 0) * Math.max(1, spans.length);
  const lengthNs = Math.max(contentNs, (durationTicks ?? 0) * state.scaleNs);
  let m = state.measured.get(track);
  if (m === undefined) {
    if (state.measured.size >= MAX_TRACKS) throw new UnreadableAudio(`blocks of more than ${MAX_TRACKS} tracks`);
    m = { startNs, endNs: startNs, opusSamples: 0, lastSamples: 0 };
    state.measured.set(track, m);
  }
  m.startNs = Math.min(m.startNs, startNs);
  m.endNs = Math.max(m.endNs, startNs + lengthNs);
  m.opusSamples += opusSamples;
  if (spans.length > 0) m.lastSamples = lastSamples;
}

function readBlockGroup(state: State, group: Element, clusterTimecode: number): Stop {
  let block: Element | undefined;
  let durationTicks: number | undefined;
  const stop = eachChild(state, group, ENDS_BLOCK_GROUP, (e) => {
    if (e.id === ID.BLOCK && !e.unknown) block = e;
    else if (e.id === ID.BLOCK_DURATION) durationTicks = readUint(state.bytes, e);
    return undefined;
  });
  if (block !== undefined) readBlock(state, block, clusterTimecode, durationTicks);
  return stop;
}

function nextCluster(state: State, from: number): number {
  const found = state.bytes.indexOf(CLUSTER_ID, from);
  const next = found < 0 ? state.bytes.length : found;
  state.budget.spend(next - from);
  return next;
}

/**
 * Walks the file flat: Segments and Clusters are entered rather than bounded by their sizes
 * (unknown sizes are common, and a size that ends a cluster early must not hide blocks a
 * player would still read); Info, Tracks and BlockGroups are read and the walk goes on where
 * they stopped; every other element is skipped by its size. The position only moves forward.
 */
function walk(state: State): void {
  const { bytes } = state;
  let timecode = 0;
  let at = 0;
  while (at < bytes.length) {
    const e = readElement(state, at, bytes.length);
    if (e === undefined) {
      at = nextCluster(state, at + 1);
      continue;
    }
    if (e.id === ID.SEGMENT || e.id === ID.CLUSTER) {
      if (e.id === ID.CLUSTER) timecode = 0;
      at = e.start;
      continue;
    }
    let stop: Stop | undefined;
    if (e.id === ID.TIMECODE) timecode = readUint(bytes, e);
    else if (e.id === ID.SIMPLE_BLOCK && !e.unknown) readBlock(state, e, timecode, undefined);
    else if (e.id === ID.BLOCK_GROUP) stop = readBlockGroup(state, e, timecode);
    else if (e.id === ID.INFO) stop = readInfo(state, e);
    else if (e.id === ID.TRACKS) stop = readTracks(state, e);
    // An element of unknown size that is not read cannot be skipped by its size: go on at the next cluster.
    if (stop !== undefined) at = stop.broken ? nextCluster(state, stop.at + 1) : stop.at;
    else at = e.unknown ? nextCluster(state, e.at + 1) : e.end;
  }
}

/** Whether the bytes start as an EBML (Matroska/WebM) file. */
export function isMatroska(bytes: Buffer): boolean {
  return bytes.length >= 4 && bytes.readUInt32BE(0) === ID.EBML;
}

/**
 * The seconds of audio a Matroska/WebM file's blocks span, or its Segment Info's Duration when
 * that is longer; undefined when it is not EBML or has neither. Throws `UnreadableAudio` past the budget (by default, walk-budget.ts's
 * for the file's size) or the track limit, or for an Opus track whose packets are encoded.
 */
export function matroskaSeconds(bytes: Buffer, budget = new WalkBudget(bytes.length)): number | undefined {
  if (!isMatroska(bytes)) return undefined;
  const state: State = { bytes, budget, scaleNs: 1_000_000, headerNs: 0, tracks: new Map(), measured: new Map() };
  walk(state);
  // The header counts as music-metadata reads it (which audio-file.ts no longer calls for EBML): the larger of it and the blocks.
  let longest: number | undefined = state.headerNs === 0 ? undefined : state.headerNs / NS_PER_SECOND;
  for (const [number, m] of state.measured) {
    const track = state.tracks.get(number);
    if (track?.audio === false) continue;
    // Its packets cannot be counted, and its timestamps alone could say less than it plays.
    if (track?.opus === true && track.encoded) throw new UnreadableAudio(`Opus track ${number} has encoded frames`);
    // Played times are the blocks' less the CodecDelay; what falls before 0 is discarded.
    const delay = track?.codecDelayNs ?? 0;
    const byTimestamps = m.endNs - delay - Math.max(0, m.startNs - delay);
    const byPackets = track?.opus === true ? ((m.opusSamples - m.lastSamples) * NS_PER_SECOND) / OPUS_RATE - delay : 0;
    const seconds = Math.max(0, byTimestamps, byPackets) / NS_PER_SECOND;
    longest = Math.max(longest ?? 0, seconds);
  }
  return longest;
}
