package codereval.replay;

import com.thoughtworks.xstream.XStream;
import com.thoughtworks.xstream.security.AnyTypePermission;

/**
 * The one XStream set-up the recorder, the input generator and the replay library share, so
 * that what one writes the others read the same way.
 */
public final class XStreams {
    private XStreams() {}

    /**
     * An XStream that reads any type (the XML is our own); {@code loader} null keeps XStream's
     * default class loader.
     *
     * <p>XStream writes a lambda that is not Serializable as null. That is left as it is: a
     * call whose method does not use the lambda replays as recorded, and one that does fails
     * its calibration and is dropped like any call the reference does not reproduce (a
     * refusal here cost jgrapht tests whose importers hold listener lambdas they never call).
     */
    public static XStream create(ClassLoader loader) {
        XStream xstream = new XStream();
        xstream.addPermission(AnyTypePermission.ANY);
        if (loader != null) {
            xstream.setClassLoader(loader);
        }
        return xstream;
    }
}
