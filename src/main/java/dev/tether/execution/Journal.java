package dev.tether.execution;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.UUID;
import java.util.concurrent.ThreadLocalRandom;

import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import dev.tether.store.ExecutionJournals.PauseWrite;
import dev.tether.store.ExecutionJournals.StoredJournal;

/**
 * What an execution met that its code does not decide, in order: each call it made, each answer handed back into it,
 * each call parked for approval or asking its server's question, each decision and answer a user gave; apart, each
 * value it read from the clock ({@code Date}) and from {@code Math.random()}. Given the code and this, a fresh context
 * runs to the same point: the code is replayed against its journal ({@link Replay}).
 *
 * <p>Recorded in memory while the code runs (a list append per event, under the execution's lock or this one's), and
 * written to the store only when the execution pauses, as one segment of what was added since the last pause. Bounded
 * by {@code tether.execution.max-journal}: past it nothing more is recorded and nothing is written, and the execution
 * goes on live only. A journal of an execution that is not durable ({@code tether.execution.durable=false}) records
 * nothing from the start.
 */
final class Journal {

    private static final Logger log = LoggerFactory.getLogger(Journal.class);
    private static final JsonMapper JSON = JsonMapper.builder().build();
    /** What an event costs beside its text, roughly: its place in the list and its numbers. */
    private static final int ENTRY_BYTES = 16;

    /** One event, as stored: its kind, the call's ordinal, and up to two texts. */
    record Entry(Kind kind, int call, @Nullable String text, @Nullable String more) {

        long bytes() {
            return ENTRY_BYTES + (text == null ? 0 : text.length()) + (more == null ? 0 : more.length());
        }
    }

    /** The kinds of events, with the letter each is stored as. */
    enum Kind {
        /** The code made call {@code call}: text is its address, more its arguments (JSON, null when none). */
        CALL("c"),
        /** Call {@code call} resolved in the code: text is the envelope (JSON) it got. */
        RESOLVED("r"),
        /** Call {@code call} failed in the code: text is the message. */
        REJECTED("x"),
        /** Call {@code call} was parked for approval: text is the question. */
        PARKED("p"),
        /** Call {@code call}'s server asked a question: text is the question (JSON). */
        ASKED("q"),
        /** The user decided on parked call {@code call}: text is accept, decline or cancel. */
        DECIDED("d"),
        /** The user answered the question of call {@code call}: text is the action, more the content (JSON). */
        ANSWERED("a"),
        /** The execution paused on call {@code call}: text is the pause's id. */
        PAUSED("w");

        private final String letter;

        Kind(String letter) {
            this.letter = letter;
        }

        static Kind of(String letter) {
            for (Kind kind : values()) {
                if (kind.letter.equals(letter)) {
                    return kind;
                }
            }
            throw new IllegalArgumentException("unknown journal entry '" + letter + "'");
        }
    }

    /** A call still open where the execution paused: parked for approval (its question) or asking its server. */
    record Open(int call, boolean asking, String question) {
    }

    private final String code;
    private final @Nullable String origin;
    private final boolean recording;
    private final long maxBytes;
    private final List<Entry> entries = new ArrayList<>();
    /** The clock's readings, run-length encoded (a loop that reads it keeps reading the same millisecond). */
    private long[] clock = new long[8];
    private int[] clockRuns = new int[8];
    private int clockCount;
    private double[] random = new double[8];
    private int randomCount;
    private int calls;
    private long bytes;
    private boolean over;
    /** What the store holds already: the entries, clock and random values written with earlier pauses. */
    private int storedEntries;
    private int storedClock;
    private int storedRandom;
    /** The store's row, once a pause wrote it: its id, version and the number of segments written. */
    private @Nullable String journalId;
    private long version;
    private int segments;
    /** While the code is replayed: where each recorded sequence stands; null when live. */
    private @Nullable Replay replay;

    private Journal(String code, @Nullable String origin, boolean recording, long maxBytes) {
        this.code = code;
        this.origin = origin;
        this.recording = recording;
        this.maxBytes = maxBytes;
        this.bytes = code.length();
    }

    /** A new execution's journal; with {@code recording} off it records nothing and is never stored. */
    static Journal of(String code, @Nullable String origin, boolean recording, long maxBytes) {
        return new Journal(code, origin, recording, maxBytes);
    }

    /** A journal that records nothing: an execution that will not survive its context. */
    static Journal none(String code) {
        return new Journal(code, null, false, 0);
    }

    /**
     * The journal of a stored execution, ready to replay its code to the point where it paused.
     *
     * @throws IllegalArgumentException when a segment cannot be read
     */
    static Journal load(StoredJournal stored, List<String> segments, long maxBytes) {
        Journal journal = new Journal(stored.code(), stored.origin(), true, maxBytes);
        for (String segment : segments) {
            journal.read(segment);
        }
        journal.storedEntries = journal.entries.size();
        journal.storedClock = journal.clockCount;
        journal.storedRandom = journal.randomCount;
        journal.journalId = stored.journalId();
        journal.version = stored.version();
        journal.segments = segments.size();
        journal.replay = new Replay(journal);
        return journal;
    }

    String code() {
        return code;
    }

    @Nullable String origin() {
        return origin;
    }

    // ---- recording ---------------------------------------------------------------------------------

    /** The next call's ordinal, from 0 in the order the code makes them. */
    synchronized int nextCall() {
        return calls++;
    }

    /** The code made a call (live; a replayed call is matched instead, {@link #replayCall}). */
    void called(int call, String address, @Nullable String arguments) {
        add(new Entry(Kind.CALL, call, address, arguments));
    }

    void resolved(int call, String envelope) {
        add(new Entry(Kind.RESOLVED, call, envelope, null));
    }

    void rejected(int call, String message) {
        add(new Entry(Kind.REJECTED, call, message, null));
    }

    void parked(int call, String question) {
        add(new Entry(Kind.PARKED, call, question, null));
    }

    void asked(int call, String question) {
        add(new Entry(Kind.ASKED, call, question, null));
    }

    void decided(int call, ResumeAction action) {
        add(new Entry(Kind.DECIDED, call, action.name().toLowerCase(), null));
    }

    void answered(int call, ResumeAction action, @Nullable Map<String, Object> content) {
        add(new Entry(Kind.ANSWERED, call, action.name().toLowerCase(), content == null ? null : JSON.writeValueAsString(content)));
    }

    void paused(int call, String pauseId) {
        add(new Entry(Kind.PAUSED, call, pauseId, null));
    }

    /** What {@code Date} reads as now: the recorded value while one is left to replay, else the clock's (recorded). */
    synchronized long now() {
        if (replay != null && replay.clock < clockCount) {
            long recorded = clock[replay.clock];
            if (++replay.clockRead == clockRuns[replay.clock]) {
                replay.clock++;
                replay.clockRead = 0;
            }
            return recorded;
        }
        long now = System.currentTimeMillis();
        if (recording && !over && clockCount > storedClock && clock[clockCount - 1] == now) {
            clockRuns[clockCount - 1]++;
        }
        else if (keeps(Long.BYTES + Integer.BYTES)) {
            clock(now, 1);
        }
        if (replay != null) {
            replay.clock = clockCount;
        }
        return now;
    }

    private void clock(long value, int run) {
        if (clockCount == clock.length) {
            clock = Arrays.copyOf(clock, clockCount * 2);
            clockRuns = Arrays.copyOf(clockRuns, clockCount * 2);
        }
        clock[clockCount] = value;
        clockRuns[clockCount++] = run;
    }

    /** What {@code Math.random()} answers: the recorded value while one is left to replay, else a fresh one (recorded). */
    synchronized double random() {
        if (replay != null && replay.random < randomCount) {
            return random[replay.random++];
        }
        double value = ThreadLocalRandom.current().nextDouble();
        if (keeps(Double.BYTES)) {
            if (randomCount == random.length) {
                random = Arrays.copyOf(random, randomCount * 2);
            }
            random[randomCount++] = value;
        }
        if (replay != null) {
            replay.random = randomCount;
        }
        return value;
    }

    private synchronized void add(Entry entry) {
        if (replay == null && keeps(entry.bytes())) {
            entries.add(entry);
        }
    }

    /** Whether {@code more} bytes are kept: recording, and within the bound, which once passed drops everything. */
    private boolean keeps(long more) {
        if (!recording || over) {
            return false;
        }
        bytes += more;
        if (bytes <= maxBytes) {
            return true;
        }
        over = true;
        entries.clear();
        clock = new long[0];
        clockRuns = new int[0];
        random = new double[0];
        clockCount = 0;
        randomCount = 0;
        log.warn("an execution's journal passed tether.execution.max-journal ({} bytes): it goes on, but a pause of it will not "
                + "survive a restart or its replica", maxBytes);
        return false;
    }

    // ---- the store -------------------------------------------------------------------------------

    /** Whether this journal records at all (its execution is durable): else the code reads the clock and randomness as they are. */
    boolean records() {
        return recording;
    }

    /** Whether a pause of the execution is to be written: it records, and its journal is within bounds. */
    synchronized boolean durable() {
        return recording && !over;
    }

    /** Whether a pause wrote the journal to the store (and the execution's end must remove it). */
    synchronized boolean stored() {
        return journalId != null;
    }

    synchronized @Nullable String journalId() {
        return journalId;
    }

    synchronized long version() {
        return version;
    }

    /**
     * What the pause {@code pauseId} writes: the segment of what was added since the last write. Taken as written
     * (a write that fails makes the journal {@link #lost}, so nothing later is written on top of a gap).
     */
    synchronized PauseWrite pause(String pauseId, String holder, String pause, long expiresAt) {
        if (journalId == null) {
            journalId = UUID.randomUUID().toString();
        }
        Map<String, Object> segment = new LinkedHashMap<>();
        List<Object[]> added = new ArrayList<>(entries.size() - storedEntries);
        for (Entry entry : entries.subList(storedEntries, entries.size())) {
            added.add(entry.more() != null ? new Object[] { entry.kind().letter, entry.call(), entry.text(), entry.more() }
                    : entry.text() != null ? new Object[] { entry.kind().letter, entry.call(), entry.text() }
                    : new Object[] { entry.kind().letter, entry.call() });
        }
        segment.put("entries", added);
        long[] readings = new long[2 * (clockCount - storedClock)];
        for (int i = storedClock; i < clockCount; i++) {
            readings[2 * (i - storedClock)] = clock[i];
            readings[2 * (i - storedClock) + 1] = clockRuns[i];
        }
        segment.put("clock", readings);
        segment.put("random", Arrays.copyOfRange(random, storedRandom, randomCount));
        storedEntries = entries.size();
        storedClock = clockCount;
        storedRandom = randomCount;
        return new PauseWrite(journalId, pauseId, holder, pause, segments++, JSON.writeValueAsString(segment), bytes, expiresAt);
    }

    /** The store took a write or a claim: the row is at its next version. */
    synchronized void advanced() {
        version++;
    }

    /** The row of a stored journal, at the version this execution holds it. */
    record Row(String journalId, long version) {
    }

    /** The execution ended: the row it wrote, to remove, once (null when none, or taken already). */
    synchronized @Nullable Row ended() {
        if (journalId == null) {
            return null;
        }
        Row row = new Row(journalId, version);
        journalId = null;
        over = true;
        entries.clear();
        return row;
    }

    /** The first write created the row at version 1. */
    synchronized void created() {
        version = 1;
    }

    /** A write failed, or another replica took the row: this execution's pauses are live only from now on. */
    synchronized void lost() {
        over = true;
        journalId = null;
        entries.clear();
    }

    private void read(String segment) {
        JsonNode node = JSON.readTree(segment);
        for (JsonNode entry : node.path("entries")) {
            Entry read = new Entry(Kind.of(entry.path(0).asString()), entry.path(1).asInt(),
                    entry.has(2) ? entry.path(2).asString() : null, entry.has(3) ? entry.path(3).asString() : null);
            entries.add(read);
            bytes += read.bytes();
        }
        JsonNode readings = node.path("clock");
        for (int i = 0; i + 1 < readings.size(); i += 2) {
            clock(readings.get(i).asLong(), readings.get(i + 1).asInt());
            bytes += Long.BYTES + Integer.BYTES;
        }
        for (JsonNode value : node.path("random")) {
            if (randomCount == random.length) {
                random = Arrays.copyOf(random, randomCount * 2);
            }
            random[randomCount++] = value.asDouble();
            bytes += Double.BYTES;
        }
    }

    // ---- replay --------------------------------------------------------------------------------------

    /** Whether the code is being replayed against the journal now. */
    synchronized boolean replaying() {
        return replay != null;
    }

    /**
     * Matches a call the replayed code makes against the journal's call of that ordinal; answers why it diverges, or
     * null when it matches.
     */
    synchronized @Nullable String replayCall(int call, String address, @Nullable String arguments) {
        Replay replaying = Objects.requireNonNull(replay, "not replaying");
        Entry recorded = replaying.calls.get(call);
        if (recorded == null) {
            return "the code made call #" + (call + 1) + ", " + described(address, arguments) + ", which its journal does not have";
        }
        if (!Objects.requireNonNull(recorded.text()).equals(address) || !Objects.equals(recorded.more(), arguments)) {
            return "call #" + (call + 1) + " is " + described(address, arguments) + " now, where the journal has "
                    + described(recorded.text(), recorded.more());
        }
        return null;
    }

    /** The answers to hand back into the code, in the order the code got them. */
    synchronized List<Entry> deliveries() {
        return Objects.requireNonNull(replay, "not replaying").deliveries;
    }

    /** The calls still open where the execution paused, in the order they were parked (the first is the pause's). */
    synchronized List<Open> open() {
        return Objects.requireNonNull(replay, "not replaying").open;
    }

    /** The call the execution paused on last, as recorded; -1 when none is. */
    synchronized int pausedOn() {
        return Objects.requireNonNull(replay, "not replaying").pausedOn;
    }

    /** The replay reached the pause: what happens from now on is recorded. */
    synchronized void replayed() {
        replay = null;
    }

    private static String described(@Nullable String address, @Nullable String arguments) {
        String args = arguments == null ? "()" : "(" + (arguments.length() > 200 ? arguments.substring(0, 200) + "…" : arguments) + ")";
        return address + args;
    }

    /** Where a replay stands: the recorded calls by ordinal, the answers in order, what was open at the pause. */
    private static final class Replay {

        final Map<Integer, Entry> calls = new LinkedHashMap<>();
        final List<Entry> deliveries = new ArrayList<>();
        final List<Open> open = new ArrayList<>();
        final int pausedOn;
        /** The clock's run being read, and how many of its readings were. */
        int clock;
        int clockRead;
        int random;

        Replay(Journal journal) {
            Map<Integer, Open> opened = new LinkedHashMap<>();
            int paused = -1;
            for (Entry entry : journal.entries) {
                switch (entry.kind()) {
                    case CALL -> calls.put(entry.call(), entry);
                    case RESOLVED, REJECTED -> {
                        deliveries.add(entry);
                        opened.remove(entry.call());
                    }
                    case PARKED -> opened.put(entry.call(), new Open(entry.call(), false, String.valueOf(entry.text())));
                    case ASKED -> opened.put(entry.call(), new Open(entry.call(), true, String.valueOf(entry.text())));
                    case DECIDED, ANSWERED -> opened.remove(entry.call());
                    case PAUSED -> paused = entry.call();
                }
            }
            open.addAll(opened.values());
            pausedOn = paused;
        }
    }
}
