package io.rmq.faults;

import io.lettuce.core.resource.ClientResources;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/** What every fault suite shares: one set of Lettuce client resources per class (see {@link FaultRun#clientResources}). */
abstract class FaultSuite {

    static ClientResources resources;

    @BeforeAll
    static void openClientResources() {
        resources = FaultRun.clientResources();
    }

    @AfterAll
    static void releaseClientResources() {
        resources.shutdown();
    }
}
