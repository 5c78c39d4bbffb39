package io.rmq.samples.merchant;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.springframework.stereotype.Component;

/** Merchants and their tiers, in memory. */
@Component
public class MerchantDirectory {

    private final Map<String, MerchantTier> tiers = new LinkedHashMap<>();

    public synchronized void register(String merchant, MerchantTier tier) {
        tiers.put(merchant, tier);
    }

    /** The registered merchants, in registration order. */
    public synchronized List<String> names() {
        return List.copyOf(tiers.keySet());
    }

    public synchronized MerchantTier tier(String merchant) {
        MerchantTier tier = tiers.get(merchant);
        if (tier == null) {
            throw new IllegalArgumentException("unknown merchant '" + merchant + "'");
        }
        return tier;
    }
}
