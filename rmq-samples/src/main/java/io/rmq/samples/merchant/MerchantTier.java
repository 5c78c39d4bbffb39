package io.rmq.samples.merchant;

/** Merchant tiers and the priority their re-render tasks get. */
public enum MerchantTier {

    /** Key accounts: the big merchants, served first. */
    KA(100),
    REGULAR(10),
    LONG_TAIL(1);

    private final long priority;

    MerchantTier(long priority) {
        this.priority = priority;
    }

    public long priority() {
        return priority;
    }

    /** The tier a priority belongs to (the highest tier whose priority it reaches). */
    public static MerchantTier ofPriority(long priority) {
        for (MerchantTier tier : values()) {
            if (priority >= tier.priority) {
                return tier;
            }
        }
        return LONG_TAIL;
    }
}
