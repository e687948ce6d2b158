import java.io.File;
import java.io.FileInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.List;

import org.jacoco.cli.internal.core.analysis.Analyzer;
import org.jacoco.cli.internal.core.analysis.CoverageBuilder;
import org.jacoco.cli.internal.core.analysis.IClassCoverage;
import org.jacoco.cli.internal.core.analysis.ICounter;
import org.jacoco.cli.internal.core.analysis.IMethodCoverage;
import org.jacoco.cli.internal.core.data.ExecutionData;
import org.jacoco.cli.internal.core.tools.ExecFileLoader;

/**
 * Which methods each test ran: reads the per-test {@code N.exec} files the harness wrote
 * ({@code -Dcodereval.jacoco.pertest}) against the project's compiled classes and prints one
 * JSON line per (test, method it ran), with the method's executable lines and its line rate,
 * the fields CoderUJB reads from Cobertura's per-test reports.
 *
 * <p>Run as a source file: {@code java -cp jacococli-nodeps.jar CoverageMap.java CLASSES DIR OUT}
 * (OUT: the JSON lines file to write). JaCoCo's core is read from the command line's jar, which
 * carries it as {@code org.jacoco.cli.internal.core} (the pinned 0.8.12, codereval.java.jacoco).
 */
public final class CoverageMap {
    public static void main(String[] args) throws IOException {
        File classes = new File(args[0]);
        File dir = new File(args[1]);
        List<String> index = Files.readAllLines(new File(dir, "index.tsv").toPath(),
                StandardCharsets.UTF_8);
        java.io.PrintStream print = new java.io.PrintStream(
                new java.io.BufferedOutputStream(new java.io.FileOutputStream(args[2])), false,
                "UTF-8");
        StringBuilder out = new StringBuilder();
        for (String entry : index) {
            int tab = entry.indexOf('\t');
            if (tab < 0) {
                continue;
            }
            String test = entry.substring(tab + 1);
            ExecFileLoader loader = new ExecFileLoader();
            loader.load(new File(dir, entry.substring(0, tab) + ".exec"));
            CoverageBuilder builder = new CoverageBuilder();
            Analyzer analyzer = new Analyzer(loader.getExecutionDataStore(), builder);
            for (ExecutionData data : loader.getExecutionDataStore().getContents()) {
                if (!data.hasHits()) {
                    continue;
                }
                File file = new File(classes, data.getName() + ".class");
                if (!file.isFile()) {
                    continue;
                }
                try (InputStream in = new FileInputStream(file)) {
                    analyzer.analyzeClass(in, data.getName());
                } catch (IOException e) {
                    // A class compiled differently from the one that ran: not the project's.
                }
            }
            for (IClassCoverage cls : builder.getClasses()) {
                String pkg = cls.getPackageName();
                String file = (pkg.isEmpty() ? "" : pkg + "/") + cls.getSourceFileName();
                for (IMethodCoverage method : cls.getMethods()) {
                    ICounter lines = method.getLineCounter();
                    if (lines.getCoveredCount() == 0 || method.getFirstLine() < 0) {
                        continue;
                    }
                    out.setLength(0);
                    out.append("{\"test\":").append(quote(test))
                            .append(",\"class\":").append(quote(cls.getName().replace('/', '.')))
                            .append(",\"file\":").append(quote(file))
                            .append(",\"method\":").append(quote(method.getName()))
                            .append(",\"desc\":").append(quote(method.getDesc()))
                            .append(",\"rate\":").append((double) lines.getCoveredCount()
                                    / lines.getTotalCount())
                            .append(",\"lines\":[");
                    boolean first = true;
                    for (int n = method.getFirstLine(); n <= method.getLastLine(); n++) {
                        if (method.getLine(n).getStatus() != ICounter.EMPTY) {
                            out.append(first ? "" : ",").append(n);
                            first = false;
                        }
                    }
                    print.println(out.append("]}"));
                }
            }
        }
        print.close();
    }

    private static String quote(String text) {
        StringBuilder quoted = new StringBuilder("\"");
        for (char c : text.toCharArray()) {
            if (c == '"' || c == '\\') {
                quoted.append('\\').append(c);
            } else if (c < 0x20) {
                quoted.append(String.format("\\u%04x", (int) c));
            } else {
                quoted.append(c);
            }
        }
        return quoted.append('"').toString();
    }
}
