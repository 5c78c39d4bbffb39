package io.rmq.core;

import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;

/**
 * A cluster-wide limit on how many messages of a topic all its consumers together handle: {@code permits} per
 * {@code per}. Enforced in Redis (a token bucket shared by every instance), not per JVM.
 *
 * @param permits messages allowed per period (at least 1)
 * @param per     the period (at least 1 ms)
 */
public record RateLimit(long permits, Duration per) {

    private static final Pattern TEXT = Pattern.compile("\\s*(\\d+)\\s*/\\s*(\\d*)\\s*(ms|s|m|h)\\s*");

    public RateLimit {
        if (permits < 1) {
            throw new RmqInvalidArgumentException("rate limit permits", permits, "must be at least 1");
        }
        if (per == null || per.toMillis() < 1) {
            throw new RmqInvalidArgumentException("rate limit period", per, "must be at least 1 ms");
        }
    }

    /**
     * Reads {@code "<permits>/<period>"}: {@code 500/s}, {@code 3000/m}, {@code 100000/h}, {@code 50/100ms}.
     *
     * @return null for null or blank text (no limit)
     */
    public static @Nullable RateLimit parse(@Nullable String text) {
        if (text == null || text.isBlank()) {
            return null;
        }
        Matcher m = TEXT.matcher(text);
        if (!m.matches()) {
            throw new RmqInvalidArgumentException("rateLimit", text,
                    "must be <permits>/<period> with a period in ms, s, m or h, e.g. 500/s, 3000/m or 50/100ms");
        }
        long permits;
        long amount;
        try {
            permits = Long.parseLong(m.group(1));
            amount = m.group(2).isEmpty() ? 1 : Long.parseLong(m.group(2));
        }
        catch (NumberFormatException ex) {
            throw new RmqInvalidArgumentException("rateLimit", text, "has a number too large");
        }
        if (permits < 1 || amount < 1) {
            throw new RmqInvalidArgumentException("rateLimit", text, "needs at least 1 permit per at least 1 ms");
        }
        Duration per = switch (m.group(3)) {
            case "ms" -> Duration.ofMillis(amount);
            case "s" -> Duration.ofSeconds(amount);
            case "m" -> Duration.ofMinutes(amount);
            default -> Duration.ofHours(amount);
        };
        return new RateLimit(permits, per);
    }

    public double perSecond() {
        return permits * 1000.0 / per.toMillis();
    }

    /**
     * Most permits the shared bucket holds: a tenth of a second's worth (at least 1), so that however the instances'
     * requests fall, no window handles much more than the limit.
     */
    public long burst() {
        return Math.max(1, (long) Math.ceil(perSecond() / 10));
    }

    @Override
    public String toString() {
        return permits + "/" + per.toMillis() + "ms";
    }
}
